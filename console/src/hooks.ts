import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload(): void;
}

/** Runs `load` when `deps` change (and on reload()); keeps the last data while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const run = ++latest.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => run === latest.current && setState({ data, loading: false }),
      (error: Error) => run === latest.current && setState((s) => ({ data: s.data, error, loading: false })),
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** Calls `tick` every `ms` while `active` (a task that is still running, say). */
export function useInterval(tick: () => void, ms: number, active = true): void {
  const saved = useRef(tick);
  saved.current = tick;
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => saved.current(), ms);
    return () => clearInterval(timer);
  }, [ms, active]);
}

/** An action's pending flag and last error, for buttons that call the API. */
export function useAction<A extends unknown[]>(
  action: (...args: A) => Promise<void>,
): { run: (...args: A) => Promise<void>; pending: boolean; error: Error | undefined } {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<Error | undefined>();
  const run = async (...args: A) => {
    setPending(true);
    setError(undefined);
    try {
      await action(...args);
    } catch (err) {
      setError(err as Error);
    } finally {
      setPending(false);
    }
  };
  return { run, pending, error };
}

/** useAction for a form: `onSubmit` keeps the browser from loading a page and runs `action`. */
export function useSubmit(action: () => Promise<void>) {
  const submit = useAction(action);
  return {
    ...submit,
    onSubmit(event: Event) {
      event.preventDefault();
      void submit.run();
    },
  };
}

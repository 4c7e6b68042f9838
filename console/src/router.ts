import { useEffect, useState } from 'preact/hooks';

/** Client-side routes under /console (the server answers index.html for every one of them). */
export const BASE = '/console';

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((l) => l()));

/** The path inside the console: '/', '/keys', '/tasks/tsk_1'... */
export function currentPath(): string {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '/';
  return path === '' ? '/' : path;
}

export function href(path: string): string {
  return `${BASE}${path}`;
}

export function navigate(path: string, replace = false): void {
  const url = href(path);
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  window.scrollTo(0, 0);
  listeners.forEach((l) => l());
}

/** The current console path and query; re-renders on navigation. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((t) => t + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return { path: currentPath(), query: new URLSearchParams(location.search) };
}

/** Matches '/tasks/:taskId' against a path; the named parts, decoded, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean);
  const got = path.split('/').filter(Boolean);
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(':')) {
      try {
        params[want[i].slice(1)] = decodeURIComponent(got[i]);
      } catch {
        return null;
      }
    } else if (want[i] !== got[i]) return null;
  }
  return params;
}

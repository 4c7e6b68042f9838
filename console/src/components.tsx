import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { href, navigate } from './router';

/** An in-console link: a real <a href> (opens in a new tab too) that navigates without reloading. */
export function Link(props: JSX.HTMLAttributes<HTMLAnchorElement> & { to: string }) {
  const { to, children, ...rest } = props;
  return (
    <a
      {...rest}
      href={href(to)}
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

/** A page's heading and its optional actions. */
export function PageHeader({ title, children }: { title: string; children?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · Genway console`;
  }, [title]);
  return (
    <div class="page-header">
      <h1>{title}</h1>
      {children ? <div class="actions">{children}</div> : null}
    </div>
  );
}

export function Card({
  title,
  children,
  class: cls,
}: {
  title?: string;
  children: ComponentChildren;
  class?: string;
}) {
  return (
    <section class={`card ${cls ?? ''}`} aria-label={title}>
      {title ? <h2>{title}</h2> : null}
      {children}
    </section>
  );
}

/** A figure with its label (balance, spend today...). */
export function Stat({
  label,
  value,
  note,
}: {
  label: string;
  value: ComponentChildren;
  note?: ComponentChildren;
}) {
  return (
    <div class="stat">
      <div class="stat-label">{label}</div>
      <div class="stat-value">{value}</div>
      {note ? <div class="stat-note">{note}</div> : null}
    </div>
  );
}

/** A wide table that scrolls sideways on a phone; focusable so a keyboard can scroll it too. */
export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
      <table>{children}</table>
    </div>
  );
}

const STATUS_TONE: Record<string, string> = {
  active: 'ok',
  succeeded: 'ok',
  completed: 'ok',
  delivered: 'ok',
  success: 'ok',
  processing: 'info',
  pending: 'info',
  queued: 'info',
  running: 'info',
  expired: 'muted',
  cancelled: 'muted',
  canceled: 'muted',
  revoked: 'muted',
  failed: 'bad',
  error: 'bad',
};

export function Badge({ status }: { status: string }) {
  return <span class={`badge badge-${STATUS_TONE[status.toLowerCase()] ?? 'muted'}`}>{status}</span>;
}

export function ErrorNotice({ error }: { error: Error | undefined | null }) {
  if (!error) return null;
  return (
    <p class="notice notice-error" role="alert">
      {error.message}
    </p>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="muted" role="status">
      {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** Copies `text` to the clipboard; says so for a moment (and to screen readers). */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      class="button secondary small"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
        } catch {
          // clipboard refused (insecure context): select-and-copy by hand still works
        }
        setCopied(true);
        setTimeout(() => setCopied(false), 1500);
      }}
    >
      <span aria-live="polite">{copied ? 'Copied' : label}</span>
    </button>
  );
}

/**
 * A confirmation in a native modal <dialog> (focus trapped, Escape closes). `onConfirm` runs the action; the dialog
 * closes when it resolves and shows its error when it fails.
 */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  onConfirm(): Promise<void>;
  onClose(): void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<Error | undefined>();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) {
      setError(undefined);
      dialog.showModal();
    } else if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog ref={ref} class="dialog" aria-labelledby="dialog-title" onClose={props.onClose}>
      <h2 id="dialog-title">{props.title}</h2>
      <div class="dialog-body">{props.children}</div>
      <ErrorNotice error={error} />
      <div class="dialog-actions">
        <button type="button" class="button secondary" onClick={() => props.onClose()}>
          Cancel
        </button>
        <button
          type="button"
          class={`button ${props.danger ? 'danger' : ''}`}
          disabled={pending}
          onClick={async () => {
            setPending(true);
            try {
              await props.onConfirm();
              props.onClose();
            } catch (err) {
              setError(err as Error);
            } finally {
              setPending(false);
            }
          }}
        >
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/** A labelled form control; `hint` is tied to the control for screen readers. */
export function Field({
  id,
  label,
  hint,
  children,
}: {
  id: string;
  label: string;
  hint?: string;
  children: ComponentChildren;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      {hint ? (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
    </div>
  );
}

/**
 * A form that calls the API (`submit` from useSubmit): its fields, the error of the last try, what the last success
 * did (`done`, announced), and the submit button, which says `busy` while the call runs.
 */
export function ActionForm({
  submit,
  label,
  busy,
  disabled,
  done,
  children,
}: {
  submit: { onSubmit(event: Event): void; pending: boolean; error: Error | undefined };
  label: string;
  busy: string;
  disabled?: boolean;
  done?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <form onSubmit={submit.onSubmit}>
      {children}
      <ErrorNotice error={submit.error} />
      {done ? (
        <p class="notice notice-ok" role="status">
          {done}
        </p>
      ) : null}
      <button type="submit" class="button" disabled={submit.pending || disabled}>
        {submit.pending ? busy : label}
      </button>
    </form>
  );
}

/** An <input> (a <textarea> with `rows`) in its Field: the control takes the id, the hint and each edit's value. */
export function InputField({
  id,
  label,
  hint,
  value,
  onValue,
  rows,
  ...attributes
}: {
  id: string;
  label: string;
  hint?: string;
  value: string;
  onValue(value: string): void;
  rows?: number;
} & Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'id' | 'label' | 'value' | 'rows'>) {
  const control = {
    ...attributes,
    id,
    'aria-describedby': hint ? `${id}-hint` : undefined,
    value,
    onInput: (event: { currentTarget: { value: string } }) => onValue(event.currentTarget.value),
  };
  return (
    <Field id={id} label={label} hint={hint}>
      {rows ? (
        <textarea rows={rows} {...(control as JSX.TextareaHTMLAttributes<HTMLTextAreaElement>)} />
      ) : (
        <input {...control} />
      )}
    </Field>
  );
}

/**
 * A <select> in its Field. `options` are values shown as they are, or a value → text map; `any`, when given, is the
 * text of a first option with the empty value.
 */
export function SelectField<V extends string>({
  id,
  label,
  value,
  onValue,
  options,
  any,
}: {
  id: string;
  label: string;
  value: V | number;
  onValue(value: V): void;
  options: readonly V[] | Record<V, string>;
  any?: string;
}) {
  const entries: [string, string][] = Array.isArray(options)
    ? options.map((o) => [o, o])
    : Object.entries<string>(options);
  // The select offers only the options' values (and the empty one of `any`): its value is a V.
  return (
    <Field id={id} label={label}>
      <select id={id} value={value} onChange={(event) => onValue(event.currentTarget.value as V)}>
        {any !== undefined ? <option value="">{any}</option> : null}
        {entries.map(([option, text]) => (
          <option key={option} value={option}>
            {text}
          </option>
        ))}
      </select>
    </Field>
  );
}

/** A column heading: its text, or its content and `num` for a right-aligned column of figures. */
export type Column = string | { text: ComponentChildren; num?: boolean };

/** A right-aligned heading, over a column of figures. */
export const numeric = (text: ComponentChildren): Column => ({ text, num: true });

/** A table's <thead>: one row of column headings. */
export function TableHead({ columns }: { columns: Column[] }) {
  return (
    <thead>
      <tr>
        {columns.map((column, i) => {
          const { text, num } = typeof column === 'string' ? { text: column, num: false } : column;
          return (
            <th key={i} scope="col" class={num ? 'num' : undefined}>
              {text}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}

/** Previous / next for cursor-paged lists (the list APIs' opaque `cursor`). */
export function Pager({
  hasPrevious,
  nextCursor,
  onPrevious,
  onNext,
}: {
  hasPrevious: boolean;
  nextCursor: string | null | undefined;
  onPrevious(): void;
  onNext(cursor: string): void;
}) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" class="button secondary small" disabled={!hasPrevious} onClick={onPrevious}>
        Previous
      </button>
      <button
        type="button"
        class="button secondary small"
        disabled={!nextCursor}
        onClick={() => nextCursor && onNext(nextCursor)}
      >
        Next
      </button>
    </nav>
  );
}

/** Key/value rows (a task's fields, an account's settings). */
export function Details({ rows }: { rows: [string, ComponentChildren][] }) {
  return (
    <dl class="details">
      {rows.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

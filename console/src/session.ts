/**
 * Who is signed in. The secret (an API key or the admin token) lives in sessionStorage only: it goes with this tab
 * and is gone when the tab closes. It is sent in the Authorization header, never in a URL.
 */
export type Session =
  | { kind: 'key'; secret: string; accountId: string; accountName: string; keyId: string }
  | { kind: 'admin'; secret: string; actingAccount: string | null };

const STORAGE_KEY = 'genway.console.session';

let current: Session | null = load();
const listeners = new Set<() => void>();

function load(): Session | null {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    return raw ? (JSON.parse(raw) as Session) : null;
  } catch {
    return null;
  }
}

export function session(): Session | null {
  return current;
}

export function setSession(next: Session | null): void {
  current = next;
  if (next) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(next));
  else sessionStorage.removeItem(STORAGE_KEY);
  for (const listener of listeners) listener();
}

export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The account the pages show: the key's own, or the one an admin drilled into (null: none chosen yet). */
export function accountInView(s: Session | null = current): string | null {
  if (!s) return null;
  return s.kind === 'key' ? s.accountId : s.actingAccount;
}

/** An admin looks into one account (or back to all with null). */
export function actAs(accountId: string | null): void {
  if (current?.kind === 'admin') setSession({ ...current, actingAccount: accountId });
}

import { session } from './session';

/** A refusal from Genway: its status and the message of its envelope (which names the field and the rule). */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export type Query = Record<string, string | number | boolean | undefined | null>;

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  body?: unknown;
  query?: Query;
  headers?: Record<string, string>;
}

/** Header an admin sends on /api/v1 to act for one account (src/http/auth.ts). */
export const ACCOUNT_HEADER = 'genway-account';

function urlOf(path: string, query?: Query): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {}))
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

async function send(path: string, options: RequestOptions): Promise<Response> {
  const s = session();
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (s) headers.authorization = `Bearer ${s.secret}`;
  if (s?.kind === 'admin' && s.actingAccount && path.startsWith('/api/v1/'))
    headers[ACCOUNT_HEADER] = s.actingAccount;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const response = await fetch(urlOf(path, options.query), {
    method: options.method ?? 'GET',
    headers,
    body,
    credentials: 'omit',
    cache: 'no-store',
  });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      const envelope = (await response.json()) as { message?: string };
      if (envelope.message) message = envelope.message;
    } catch {
      // not JSON: keep the status line
    }
    throw new ApiFailure(response.status, message);
  }
  return response;
}

/** Calls Genway's API and returns the envelope's `data`; throws ApiFailure with Genway's message. */
export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const response = await send(path, options);
  const envelope = (await response.json()) as { data: T };
  return envelope.data;
}

/** The same call, answered as text (CSV reports). */
export async function apiText(path: string, options: RequestOptions = {}): Promise<string> {
  return (await send(path, options)).text();
}

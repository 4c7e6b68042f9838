/** The part of Genway's HTTP API the tool server calls; an error envelope becomes a GenwayApiError. */
export class GenwayApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface GenwayApi {
  get(path: string): Promise<unknown>;
  post(path: string, body: unknown): Promise<unknown>;
}

export function createGenwayApi(baseUrl: string, apiKey: string): GenwayApi {
  const root = `${baseUrl.replace(/\/+$/, '')}/api/v1`;
  async function call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(`${root}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${apiKey}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
    } catch (err) {
      throw new GenwayApiError(0, `Genway is not reachable at ${baseUrl}: ${(err as Error).message}`);
    }
    let envelope: { code?: number; message?: string; data?: unknown };
    try {
      envelope = (await res.json()) as typeof envelope;
    } catch {
      throw new GenwayApiError(
        res.status,
        `Genway answered ${res.status} without a JSON envelope (is GENWAY_BASE_URL the server root?)`,
      );
    }
    if (!res.ok || envelope.code !== 200) {
      throw new GenwayApiError(envelope.code ?? res.status, envelope.message ?? `HTTP ${res.status}`);
    }
    return envelope.data;
  }
  return { get: (path) => call('GET', path), post: (path, body) => call('POST', path, body) };
}

/**
 * Whether an error means the store could not be reached (Redis down, restarting or failing over) rather than that
 * it refused the operation: such a request did nothing and can be retried, so it is a 503 with Retry-After, never a
 * 500. Covers ioredis's own errors and the socket errors it passes on.
 */
export function isStoreUnreachable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'MaxRetriesPerRequestError') return true;
  const code = (err as NodeJS.ErrnoException).code;
  if (code && ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH'].includes(code))
    return true;
  return /^(Connection is closed|Stream isn't writeable|LOADING |READONLY |CLUSTERDOWN |TRYAGAIN |MASTERDOWN )/.test(
    err.message,
  );
}

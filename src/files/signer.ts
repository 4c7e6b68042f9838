import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Result URLs stop working this long after the task completes. */
export const RESULT_URL_LIFETIME_MS = 24 * 60 * 60 * 1000;

/**
 * Signs result-file URLs: `/files/<taskId>/<name>?exp=<ms>&sig=<hex>`. The key derives from security.secretsKey, so
 * every replica verifies every other's URLs; embedded mode without it uses a per-process key.
 */
export class FileSigner {
  private readonly key: Buffer;

  constructor(
    secretsKey: string | undefined,
    private publicUrl: string,
  ) {
    this.key = secretsKey
      ? createHmac('sha256', secretsKey).update('genway:result-files').digest()
      : randomBytes(32);
  }

  private signature(taskId: string, name: string, expiresAt: number): Buffer {
    return createHmac('sha256', this.key).update(`${taskId}/${name}:${expiresAt}`).digest();
  }

  /**
   * A server started on port 0 learns its port when it binds: a derived base (`http://127.0.0.1:0`) takes it then.
   * A configured publicUrl never has port 0 and is left as it is.
   */
  useBoundPort(port: number): void {
    const base = new URL(this.publicUrl);
    if (base.port !== '0') return;
    base.port = String(port);
    this.publicUrl = base.origin;
  }

  /** Where result files are served from (scheme, host and port). */
  get origin(): string {
    return new URL(this.publicUrl).origin;
  }

  url(taskId: string, name: string, expiresAt: number): string {
    const sig = this.signature(taskId, name, expiresAt).toString('hex');
    return `${this.publicUrl.replace(/\/+$/, '')}/files/${taskId}/${name}?exp=${expiresAt}&sig=${sig}`;
  }

  /** Constant-time check of a presented signature. */
  verify(taskId: string, name: string, expiresAt: number, sig: string): boolean {
    const expected = this.signature(taskId, name, expiresAt);
    const given = /^[0-9a-f]{64}$/.test(sig) ? Buffer.from(sig, 'hex') : Buffer.alloc(32);
    return timingSafeEqual(expected, given) && sig.length === 64;
  }
}

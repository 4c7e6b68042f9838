import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import type { Clock } from '../clock';
import type { SecretVersion, WebhookSecretStore } from './store';

/** AES-256-GCM with a key derived from security.secretsKey: `iv.tag.ciphertext`, base64url. */
class SecretBox {
  private readonly key: Buffer;

  constructor(secretsKey: string | undefined) {
    this.key = secretsKey
      ? createHash('sha256').update(`genway:webhook-secrets:${secretsKey}`).digest()
      : randomBytes(32);
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [iv, cipher.getAuthTag(), body].map((b) => b.toString('base64url')).join('.');
  }

  open(sealed: string): string {
    const [iv, tag, body] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  }
}

export interface SigningSecret {
  version: number;
  secret: string;
}

/** `v1,` + lowercase hex HMAC-SHA256 of `{eventId}.{timestamp}.{rawBody}`, keyed by the secret's UTF-8 bytes. */
export function signDelivery(
  secret: string,
  eventId: string,
  timestamp: number,
  rawBody: string | Buffer,
): string {
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  mac.update(`${eventId}.${timestamp}.`);
  mac.update(rawBody);
  return `v1,${mac.digest('hex')}`;
}

/** Account-level webhook signing secrets: versioned, rotated with a grace period, revocable, encrypted at rest. */
export class WebhookSecrets {
  private readonly box: SecretBox;

  constructor(
    private readonly store: WebhookSecretStore,
    private readonly clock: Clock,
    secretsKey: string | undefined,
    private readonly rotationGraceMs: number,
  ) {
    this.box = new SecretBox(secretsKey);
  }

  private fresh(): string {
    return this.box.seal(`whsec_${randomBytes(32).toString('base64url')}`);
  }

  private reveal(record: SecretVersion): SigningSecret {
    return { version: record.version, secret: this.box.open(record.ciphertext) };
  }

  /** The current secret, created on first use (and after a revoke, with a higher version). */
  async current(accountId: string): Promise<SigningSecret> {
    return this.reveal(await this.store.current(accountId, this.fresh(), this.clock.now()));
  }

  async rotate(accountId: string): Promise<SigningSecret> {
    return this.reveal(await this.store.rotate(accountId, this.fresh(), this.clock.now()));
  }

  async revoke(accountId: string): Promise<{ revoked: true; version: number }> {
    return { revoked: true, version: await this.store.revoke(accountId, this.clock.now()) };
  }

  revokedAt(accountId: string): Promise<number | null> {
    return this.store.revokedAt(accountId);
  }

  /**
   * The secret a delivery signs with: a batch's own version while it is current or within the rotation grace;
   * null when it was revoked or its grace is over (the delivery is then suppressed).
   */
  async forVersion(accountId: string, version: number): Promise<SigningSecret | null> {
    const record = await this.store.get(accountId, version);
    if (!record || record.revokedAt !== undefined) return null;
    if (record.retiredAt !== undefined && this.clock.now() >= record.retiredAt + this.rotationGraceMs)
      return null;
    return this.reveal(record);
  }
}

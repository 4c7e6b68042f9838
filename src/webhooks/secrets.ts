import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { WebhookScheme } from '../accounts/store';
import type { Clock } from '../clock';
import { showSecret } from './signing';
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

/** At most this many signatures on one standard-scheme delivery (rotations within one grace period are rare). */
const MAX_SIGNATURES = 3;

/** Account-level webhook signing secrets: versioned, rotated with a grace period, revocable, encrypted at rest. */
export class WebhookSecrets {
  private readonly box: SecretBox;

  constructor(
    private readonly store: WebhookSecretStore,
    private readonly clock: Clock,
    secretsKey: string | undefined,
    private readonly rotationGraceMs: number,
    /** The account's signing scheme: it decides how a secret is shown. */
    private readonly schemeOf: (accountId: string) => Promise<WebhookScheme>,
  ) {
    this.box = new SecretBox(secretsKey);
  }

  private fresh(): string {
    return this.box.seal(`whsec_${randomBytes(32).toString('base64url')}`);
  }

  private reveal(record: SecretVersion): SigningSecret {
    return { version: record.version, secret: this.box.open(record.ciphertext) };
  }

  private async shown(accountId: string, record: SecretVersion): Promise<SigningSecret> {
    const { version, secret } = this.reveal(record);
    return { version, secret: showSecret(secret, await this.schemeOf(accountId)) };
  }

  /** The current secret, created on first use (and after a revoke, with a higher version). */
  async current(accountId: string): Promise<SigningSecret> {
    return this.reveal(await this.store.current(accountId, this.fresh(), this.clock.now()));
  }

  /** GET /webhooks/secret: the current secret as the account's scheme shows it. */
  async show(accountId: string): Promise<SigningSecret> {
    return this.shown(accountId, await this.store.current(accountId, this.fresh(), this.clock.now()));
  }

  /** POST /webhooks/secret/rotate: the new current secret, shown as `show` does. */
  async rotate(accountId: string): Promise<SigningSecret> {
    return this.shown(accountId, await this.store.rotate(accountId, this.fresh(), this.clock.now()));
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
    return record && this.live(record) ? this.reveal(record) : null;
  }

  /** Neither revoked nor past its rotation grace. */
  private live(record: SecretVersion): boolean {
    if (record.revokedAt !== undefined) return false;
    return record.retiredAt === undefined || this.clock.now() < record.retiredAt + this.rotationGraceMs;
  }

  /**
   * `signing` first, then the other secrets a receiver may hold right now: the current one and those retired within
   * the grace, newest first (a receiver that has not yet picked up a rotation, or already has, verifies either way).
   */
  async withGraceSecrets(accountId: string, signing: SigningSecret): Promise<SigningSecret[]> {
    const all = [signing];
    const current = await this.store.current(accountId, this.fresh(), this.clock.now());
    for (let version = current.version; version > 0 && all.length < MAX_SIGNATURES; version--) {
      if (version === signing.version) continue;
      const record = version === current.version ? current : await this.store.get(accountId, version);
      // Versions retire in order: once one is out of its grace, every older one is too.
      if (!record || !this.live(record)) break;
      all.push(this.reveal(record));
    }
    return all;
  }
}

import { randomBytes } from 'node:crypto';

const ID_BYTES = 16;
/** Random bytes drawn for 256 ids at a time (as Node does for randomUUID): one CSPRNG call, not one per id. */
const POOL_BYTES = ID_BYTES * 256;
let pool = Buffer.alloc(0);
let offset = 0;

/** The offset of 16 fresh random bytes in `pool`. */
function take(): number {
  if (offset + ID_BYTES > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const at = offset;
  offset += ID_BYTES;
  return at;
}

/** Random, unguessable identifier: `<prefix>_` + 128 bits in lowercase hex (e.g. `task_3f9c...`). */
export function newId(prefix: string): string {
  const at = take();
  return `${prefix}_${pool.toString('hex', at, at + ID_BYTES)}`;
}

/**
 * A UUID of version 7 (RFC 9562): the Unix time in ms, then 74 random bits. Ids made in one ms sit together, and later
 * ones after them, so an index of them grows at its end (the request log's `request_id`), as one of times does; a
 * version 4 id lands on a random page of it.
 */
export function uuidV7(now = Date.now()): string {
  const at = take();
  const b = pool;
  b.writeUIntBE(now, at, 6);
  b[at + 6] = (b[at + 6] & 0x0f) | 0x70; // the version
  b[at + 8] = (b[at + 8] & 0x3f) | 0x80; // the variant
  const hex = b.toString('hex', at, at + ID_BYTES);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Hex digits of an account id that place the account's data on one Redis Cluster hash slot. */
const TAG_CHARS = 4;
const TAGGED = new RegExp(`^[a-z]+_([0-9a-f]{${TAG_CHARS}})`);

/**
 * The account's placement tag: the first 4 hex digits of its id. In Redis Cluster every key of the account (balance,
 * ledger, secrets, idempotency keys) and of its tasks and batches carries it as the hash tag, so one script can charge
 * the account and write the task (src/store/keys.ts). An id of another form gets 4 hex digits of a hash of it.
 */
export function accountTag(accountId: string): string {
  const tagged = TAGGED.exec(accountId);
  if (tagged) return tagged[1];
  let h = 0x811c9dc5; // FNV-1a
  for (let i = 0; i < accountId.length; i++) h = Math.imul(h ^ accountId.charCodeAt(i), 0x01000193);
  return ((h >>> 0) & 0xffff).toString(16).padStart(TAG_CHARS, '0');
}

/**
 * A new id of something that belongs to `accountId` (a task, a batch): its first 4 hex digits are the account's tag,
 * so `idTag` finds the account's hash slot from the id alone (a result URL, a job). 112 random bits remain.
 */
export function newAccountId(prefix: string, accountId: string): string {
  const id = newId(prefix);
  const at = prefix.length + 1;
  return `${id.slice(0, at)}${accountTag(accountId)}${id.slice(at + TAG_CHARS)}`;
}

/** The placement tag an id made by `newAccountId` carries (an id of another form: the id itself, its own slot). */
export function idTag(id: string): string {
  return TAGGED.exec(id)?.[1] ?? id;
}

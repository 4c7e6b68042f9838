import { randomBytes } from 'node:crypto';

const ID_BYTES = 16;
/** Random bytes drawn for 256 ids at a time (as Node does for randomUUID): one CSPRNG call, not one per id. */
const POOL_BYTES = ID_BYTES * 256;
let pool = Buffer.alloc(0);
let offset = 0;

/** Random, unguessable identifier: `<prefix>_` + 128 bits in lowercase hex (e.g. `task_3f9c...`). */
export function newId(prefix: string): string {
  if (offset + ID_BYTES > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return `${prefix}_${hex}`;
}

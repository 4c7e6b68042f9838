import { randomBytes } from 'node:crypto';

/** Random, unguessable identifier: `<prefix>_` + 128 bits in lowercase hex (e.g. `task_3f9c...`). */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(16).toString('hex')}`;
}

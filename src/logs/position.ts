import type { Position } from './types';

/** The id of a row: its time and its sequence, which is also where the page after it starts. */
export function logIdOf(time: number, seq: string | number): string {
  return `${time}.${seq}`;
}

export function positionOfId(logId: string): Position | null {
  const m = /^(\d{1,15})\.(\d{1,19})$/.exec(logId);
  return m ? { time: Number(m[1]), seq: m[2] } : null;
}

/** The opaque cursor of the page after `position`: the id of the row it starts after. */
export function encodeLogCursor(position: Position | null): string | null {
  return position === null ? null : Buffer.from(logIdOf(position.time, position.seq)).toString('base64url');
}

/** Where a cursor's page starts; null when the text is not a cursor a list returned. */
export function decodeLogCursor(text: string): Position | null {
  return positionOfId(Buffer.from(text, 'base64url').toString('utf8'));
}

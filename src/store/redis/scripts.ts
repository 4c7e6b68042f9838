import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { assetPath } from '../../paths';
import type { RedisClient } from './connection';

const LUA_DIR = assetPath('store', 'redis', 'lua');

function readLua(name: string): string {
  return fs.readFileSync(path.join(LUA_DIR, `${name}.lua`), 'utf8');
}

/**
 * A Lua script file, with the library files it declares (`-- needs: a, b`) prepended.
 * Runs by EVALSHA and falls back to EVAL once when the server has not cached it yet.
 */
export class LuaScript {
  readonly source: string;
  readonly sha: string;

  constructor(readonly name: string) {
    const body = readLua(name);
    const needs =
      /^-- needs: (.+)$/m
        .exec(body)?.[1]
        .split(',')
        .map((s) => s.trim()) ?? [];
    this.source = [...needs.map(readLua), body].join('\n');
    this.sha = createHash('sha1').update(this.source).digest('hex');
  }

  async run(redis: RedisClient, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

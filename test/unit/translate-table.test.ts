/**
 * The mapping table is the code's: docs/translation.md is rendered from it, and what it says of a field is what
 * translateRequest does with it.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import {
  FIELD_TABLES,
  translateRequest,
  TranslationError,
  type CallFormat,
  type TargetFormat,
} from '../../src/gateway/translate';

const CALLERS: CallFormat[] = ['chat', 'messages', 'generate', 'responses'];
const TARGETS: TargetFormat[] = ['chat', 'messages', 'generate'];
const translate = (from: CallFormat, to: TargetFormat, body: Record<string, unknown>) =>
  translateRequest(from, to, 'create', body, { targetModel: 't', stream: body.stream === true });

test('docs/translation.md is the table the code runs on (node scripts/translation-table.js rewrites it)', () => {
  // Apart from jest: the script formats with prettier, which loads its plugins by dynamic import.
  const root = path.join(__dirname, '../..');
  expect(() =>
    execFileSync(process.execPath, ['scripts/translation-table.js', '--check'], { cwd: root, stdio: 'pipe' }),
  ).not.toThrow();
});

describe.each(CALLERS)('the %s caller’s table', (caller) => {
  const table = FIELD_TABLES[caller];
  const targets = TARGETS.filter((t) => t !== caller);

  test('says what becomes of each field on every other format', () => {
    for (const rule of table.rules) expect(Object.keys(rule.on).sort()).toEqual([...targets].sort());
    expect(new Set(table.rules.map((r) => r.field)).size).toBe(table.rules.length);
  });

  test('its smallest request translates to every target', () => {
    for (const target of targets) expect(() => translate(caller, target, table.minimal)).not.toThrow();
  });

  const sampled = table.rules.filter((r) => r.sample);
  test.each(sampled.flatMap((r) => targets.map((t) => [r.field, t, r] as const)))(
    '%s to %s: refused where the table refuses it, translated elsewhere',
    (field, target, rule) => {
      const sample = rule.sample!;
      const body = 'body' in sample ? sample.body : { ...table.minimal, [field]: sample.value };
      const run = () => translate(caller, target, body);
      if (rule.on[target]!.how === 'refused') {
        expect(run).toThrow(TranslationError);
        try {
          run();
        } catch (e) {
          expect((e as TranslationError).field.startsWith(field.split(/[[.]/)[0]!)).toBe(true);
        }
      } else {
        expect(run).not.toThrow();
      }
    },
  );

  test('a field no table lists is refused, naming it', () => {
    for (const target of targets) {
      expect(() => translate(caller, target, { ...table.minimal, frobnicate: true })).toThrow(
        expect.objectContaining({
          field: 'frobnicate',
          message: expect.stringContaining('frobnicate: true is not translated'),
        }),
      );
    }
  });
});

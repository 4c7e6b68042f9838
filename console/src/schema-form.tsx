/**
 * A small JSON Schema to form renderer for a model's `inputSchema` (GET /api/v1/models/{id}): one labelled control
 * per property, defaults filled in, and the request body built back from the form. It knows what the catalog's
 * schemas use (string, enum, number/integer with bounds, boolean, arrays of strings, anyOf of those) and falls back
 * to a JSON text field for anything else.
 */

export interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  description?: string;
  title?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
}

type Control =
  | { kind: 'enum'; values: unknown[] }
  | { kind: 'boolean' }
  | { kind: 'number'; integer: boolean; min?: number; max?: number; step?: number }
  | { kind: 'text'; multiline: boolean; maxLength?: number }
  | { kind: 'list'; numbers: boolean }
  | { kind: 'json' };

/** The raw state of each control: text for most, a flag for checkboxes. */
export type FormValues = Record<string, string | boolean>;

/** Bounds this large are a type's limits, not a rule worth showing (zod's safe-integer range). */
const sensible = (n: number | undefined) => (n !== undefined && Math.abs(n) < 1e12 ? n : undefined);

function typeOf(schema: JsonSchema): string | undefined {
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== 'null');
  return schema.type;
}

function controlOf(name: string, schema: JsonSchema): Control {
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches?.length) {
    const numeric = branches.find((b) => typeOf(b) === 'integer' || typeOf(b) === 'number');
    if (numeric) return controlOf(name, { ...numeric, description: schema.description });
    const values = branches.flatMap((b) => b.enum ?? ('const' in b ? [b.const] : []));
    if (values.length && branches.every((b) => b.enum || 'const' in b)) return { kind: 'enum', values };
    return { kind: 'json' };
  }
  if (schema.enum?.length) return { kind: 'enum', values: schema.enum };
  if ('const' in schema) return { kind: 'enum', values: [schema.const] };
  const type = typeOf(schema);
  if (type === 'boolean') return { kind: 'boolean' };
  if (type === 'integer' || type === 'number') {
    const integer = type === 'integer';
    return {
      kind: 'number',
      integer,
      min: sensible(schema.minimum ?? schema.exclusiveMinimum),
      max: sensible(schema.maximum ?? schema.exclusiveMaximum),
      step: schema.multipleOf ?? (integer ? 1 : undefined),
    };
  }
  if (type === 'string') {
    const long = /prompt|lyric|text|caption/i.test(name) || (schema.maxLength ?? 0) > 200;
    return { kind: 'text', multiline: long, maxLength: schema.maxLength };
  }
  // A field the schema leaves open (checked by a rule of its own) whose name says it holds URLs.
  if (type === undefined && /_urls$/.test(name)) return { kind: 'list', numbers: false };
  if (type === 'array') {
    const itemType = schema.items ? typeOf(schema.items) : undefined;
    if (itemType === 'string' || itemType === 'integer' || itemType === 'number')
      return { kind: 'list', numbers: itemType !== 'string' };
  }
  return { kind: 'json' };
}

function fieldsOf(schema: JsonSchema): [string, JsonSchema][] {
  return Object.entries(schema.properties ?? {});
}

const isRequired = (schema: JsonSchema, name: string) => schema.required?.includes(name) ?? false;

/** The form's first state: each property's default, else what a required one needs to be valid at a glance. */
export function initialValues(schema: JsonSchema): FormValues {
  const values: FormValues = {};
  for (const [name, field] of fieldsOf(schema)) {
    const control = controlOf(name, field);
    const required = isRequired(schema, name);
    const fallback = field.default;
    const has = fallback !== undefined;
    switch (control.kind) {
      case 'enum': {
        const index = has ? control.values.findIndex((v) => v === fallback) : required ? 0 : -1;
        values[name] = index >= 0 ? String(index) : '';
        break;
      }
      case 'boolean':
        values[name] = has ? fallback === true : false;
        break;
      case 'number':
        values[name] = has
          ? String(fallback)
          : required && control.min !== undefined
            ? String(control.min)
            : '';
        break;
      case 'text':
        values[name] = has ? String(fallback) : '';
        break;
      case 'list':
        values[name] = has && Array.isArray(fallback) ? fallback.join('\n') : '';
        break;
      case 'json':
        values[name] = has ? JSON.stringify(fallback) : '';
    }
  }
  return values;
}

/** The `input` the form stands for: empty optional fields are left out (so the API applies its defaults). */
export function buildInput(schema: JsonSchema, values: FormValues): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [name, field] of fieldsOf(schema)) {
    const control = controlOf(name, field);
    const raw = values[name];
    if (control.kind === 'boolean') {
      // An optional flag without a default is sent only when set: unset means "not given".
      if (field.default !== undefined || isRequired(schema, name) || raw === true) input[name] = raw === true;
      continue;
    }
    const text = typeof raw === 'string' ? raw : '';
    if (text.trim() === '') continue;
    switch (control.kind) {
      case 'enum':
        input[name] = control.values[Number(text)];
        break;
      case 'number': {
        const n = Number(text);
        // Not a number: sent as typed, and the API says what it wants.
        input[name] = text.trim() !== '' && Number.isFinite(n) ? n : text;
        break;
      }
      case 'text':
        input[name] = text;
        break;
      case 'list': {
        const items = text
          .split('\n')
          .map((line) => line.trim())
          .filter(Boolean);
        input[name] = control.numbers
          ? items.map((item) => (Number.isFinite(Number(item)) ? Number(item) : item))
          : items;
        break;
      }
      case 'json':
        try {
          input[name] = JSON.parse(text) as unknown;
        } catch {
          input[name] = text;
        }
    }
  }
  return input;
}

/** The property an API message names (`input.duration must be ...` → duration). */
export function fieldNamed(message: string | undefined): string | null {
  const match = message ? /\binput\.([A-Za-z0-9_]+)/.exec(message) : null;
  return match ? match[1] : null;
}

function range(min: number | undefined, max: number | undefined, unit = ''): string | null {
  if (min !== undefined && min === max) return `exactly ${min}${min === 1 ? unit.replace(/s$/, '') : unit}`;
  if (min !== undefined && max !== undefined) return `from ${min} to ${max}${unit}`;
  if (min !== undefined) return `at least ${min}${unit}`;
  if (max !== undefined) return `at most ${max}${unit}`;
  return null;
}

function hintOf(name: string, field: JsonSchema, control: Control): string {
  const parts: string[] = [];
  if (field.description) parts.push(field.description);
  if (control.kind === 'number') {
    const r = range(control.min, control.max);
    parts.push(`${control.integer ? 'An integer' : 'A number'}${r ? ` ${r}` : ''}`);
  }
  if (control.kind === 'list') {
    const what = /url/i.test(name) ? 'URL' : 'value';
    const r = range(field.minItems, field.maxItems, ' items');
    parts.push(`One ${what} per line${r ? `, ${r}` : ''}`);
  }
  if (control.kind === 'json')
    parts.push('A JSON value, for example 6, "text" or [1, 2]; empty leaves it out');
  if (control.kind === 'text' && field.pattern) parts.push(`Pattern ${field.pattern}`);
  return parts.join('. ');
}

export function SchemaForm({
  schema,
  values,
  onChange,
  idPrefix,
  invalid,
}: {
  schema: JsonSchema;
  values: FormValues;
  onChange(values: FormValues): void;
  idPrefix: string;
  /** The field the API's last refusal named, and its message. */
  invalid?: { field: string; message: string } | null;
}) {
  const fields = fieldsOf(schema);
  if (fields.length === 0) return <p class="muted">This model takes no input fields.</p>;
  return (
    <div class="schema-form">
      {fields.map(([name, field]) => {
        const control = controlOf(name, field);
        const id = `${idPrefix}-${name}`;
        const required = isRequired(schema, name);
        const hint = hintOf(name, field, control);
        const error = invalid?.field === name ? invalid.message : null;
        const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
        const common = {
          id,
          name,
          'aria-describedby': describedBy || undefined,
          'aria-invalid': error ? (true as const) : undefined,
        };
        const raw = values[name];
        const text = typeof raw === 'string' ? raw : '';
        const set = (value: string | boolean) => onChange({ ...values, [name]: value });
        // The mark sits beside the label, not in it: the field's name stays exactly the property's name.
        const label = (
          <span class="label-row">
            <label for={id}>{name}</label>
            {required ? (
              <span class="req" aria-hidden="true">
                *
              </span>
            ) : null}
          </span>
        );
        const notes = (
          <>
            {hint ? (
              <p class="hint" id={`${id}-hint`}>
                {hint}
              </p>
            ) : null}
            {error ? (
              <p class="field-error" id={`${id}-error`}>
                {error}
              </p>
            ) : null}
          </>
        );
        if (control.kind === 'boolean') {
          return (
            <div key={name} class={`field field-check${error ? ' field-invalid' : ''}`}>
              <div class="check-row">
                <input
                  {...common}
                  type="checkbox"
                  checked={raw === true}
                  onChange={(event) => set(event.currentTarget.checked)}
                />
                {label}
              </div>
              {notes}
            </div>
          );
        }
        let input;
        switch (control.kind) {
          case 'enum':
            input = (
              <select
                {...common}
                aria-required={required || undefined}
                value={text}
                onChange={(event) => set(event.currentTarget.value)}
              >
                {!required || text === '' ? <option value="">Not set</option> : null}
                {control.values.map((value, i) => (
                  <option key={i} value={String(i)}>
                    {typeof value === 'string' ? value : JSON.stringify(value)}
                  </option>
                ))}
              </select>
            );
            break;
          case 'number':
            input = (
              <input
                {...common}
                type="number"
                inputMode={control.integer ? 'numeric' : 'decimal'}
                aria-required={required || undefined}
                min={control.min}
                max={control.max}
                step={control.step ?? 'any'}
                value={text}
                onInput={(event) => set(event.currentTarget.value)}
              />
            );
            break;
          case 'text':
            input = control.multiline ? (
              <textarea
                {...common}
                aria-required={required || undefined}
                rows={3}
                value={text}
                onInput={(event) => set(event.currentTarget.value)}
              />
            ) : (
              <input
                {...common}
                type="text"
                aria-required={required || undefined}
                value={text}
                onInput={(event) => set(event.currentTarget.value)}
              />
            );
            break;
          case 'list':
          case 'json':
            input = (
              <textarea
                {...common}
                class="mono"
                aria-required={required || undefined}
                rows={control.kind === 'list' ? 2 : 1}
                spellcheck={false}
                value={text}
                onInput={(event) => set(event.currentTarget.value)}
              />
            );
        }
        return (
          <div key={name} class={`field${error ? ' field-invalid' : ''}`}>
            {label}
            {input}
            {notes}
          </div>
        );
      })}
    </div>
  );
}

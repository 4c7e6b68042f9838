import { isObj, type Obj } from '../shared';

/**
 * Gemini's `Schema` (an OpenAPI 3.0 subset: upper-case types, `nullable`, `propertyOrdering`) as the JSON Schema
 * the other formats take. The REST API takes snake_case keys too (`any_of`, `max_items`).
 */
export function jsonSchemaOf(schema: Obj): Obj {
  const out: Obj = {};
  for (const rawKey in schema) {
    const key = camel(rawKey);
    const value = schema[rawKey];
    switch (key) {
      case 'type': {
        const type = String(value).toLowerCase();
        if (type !== 'type_unspecified') out.type = type;
        break;
      }
      case 'properties':
        if (isObj(value)) {
          const props: Obj = {};
          for (const name in value)
            props[name] = isObj(value[name]) ? jsonSchemaOf(value[name]) : value[name];
          out.properties = props;
        }
        break;
      case 'items':
        out.items = isObj(value) ? jsonSchemaOf(value) : value;
        break;
      case 'anyOf':
        out.anyOf = Array.isArray(value) ? value.map((v) => (isObj(v) ? jsonSchemaOf(v) : v)) : value;
        break;
      case 'minItems':
      case 'maxItems':
      case 'minLength':
      case 'maxLength':
      case 'minProperties':
      case 'maxProperties':
        // int64 fields: the REST API writes them as strings.
        out[key] = typeof value === 'string' ? Number(value) : value;
        break;
      case 'nullable':
      case 'propertyOrdering':
        break;
      default:
        out[key] = value;
    }
  }
  if (schema.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else out.anyOf = [...((out.anyOf as unknown[]) ?? []), { type: 'null' }];
  }
  return out;
}

const camel = (key: string): string => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

import type { ComponentChildren } from 'preact';
import { Details, numeric, TableHead, TableWrap } from '../../components';
import { usd } from '../../format';

/** A model's `pricing` (GET /api/v1/models/{id}) in words and tables, whatever shape its family gives it. */

type Pricing = Record<string, unknown>;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `usdPerSecondStandard` → { unit: 'second', qualifier: 'standard' }. */
function priceKey(key: string): { unit: string; qualifier: string } | null {
  const match = /^usdPer([A-Z][a-z]*)(.*)$/.exec(key);
  if (!match) return null;
  const words = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return { unit: words(match[1]), qualifier: words(match[2]).trim() };
}

function numbersIn(value: unknown): number[] {
  if (typeof value === 'number') return [value];
  if (isObject(value)) return Object.values(value).flatMap(numbersIn);
  return [];
}

/** One line for the catalog: "from $0.02 per image", "$0.05 per use". */
export function priceSummary(pricing: Pricing | undefined): string {
  if (!pricing) return 'Price on the model page';
  const parts: string[] = [];
  for (const [key, value] of Object.entries(pricing)) {
    const price = priceKey(key);
    if (!price) continue;
    const numbers = numbersIn(value);
    if (!numbers.length) continue;
    const min = Math.min(...numbers);
    const exact = typeof value === 'number' || numbers.every((n) => n === min);
    parts.push(
      `${exact ? '' : 'from '}${usd(min)} per ${price.unit}${price.qualifier ? ` (${price.qualifier})` : ''}`,
    );
  }
  return parts.length ? parts.join(' · ') : 'See the model page';
}

function cell(value: unknown): ComponentChildren {
  if (typeof value === 'number') return usd(value);
  if (Array.isArray(value)) return value.join(', ');
  if (value === undefined) return '—';
  return isObject(value) ? JSON.stringify(value) : String(value);
}

function PriceTable({ caption, value }: { caption: string; value: Record<string, unknown> }) {
  const rows = Object.entries(value);
  const nested = rows.some(([, v]) => isObject(v));
  if (!nested) {
    return (
      <TableWrap label={caption}>
        <caption>{caption}</caption>
        <TableHead columns={['Option', numeric('Price')]} />
        <tbody>
          {rows.map(([option, price]) => (
            <tr key={option}>
              <th scope="row">{option}</th>
              <td class="num">{cell(price)}</td>
            </tr>
          ))}
        </tbody>
      </TableWrap>
    );
  }
  const columns = [...new Set(rows.flatMap(([, v]) => (isObject(v) ? Object.keys(v) : [])))];
  return (
    <TableWrap label={caption}>
      <caption>{caption}</caption>
      <TableHead columns={['Option', ...columns.map((c) => (c === 'modes' ? c : numeric(c)))]} />
      <tbody>
        {rows.map(([option, v]) => (
          <tr key={option}>
            <th scope="row">{option}</th>
            {columns.map((c) => {
              const inner = isObject(v) ? v[c] : undefined;
              return (
                <td key={c} class={typeof inner === 'number' ? 'num' : 'wrap'}>
                  {cell(inner)}
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </TableWrap>
  );
}

export function PriceDetails({ pricing }: { pricing: Pricing | undefined }) {
  if (!pricing || Object.keys(pricing).length === 0) return <p class="muted">No price rules published.</p>;
  const rules = Array.isArray(pricing.rules) ? (pricing.rules as unknown[]).map(String) : [];
  const plain: [string, ComponentChildren][] = [];
  const tables: ComponentChildren[] = [];
  if (typeof pricing.unit === 'string') plain.push(['Billed per', pricing.unit]);
  for (const [key, value] of Object.entries(pricing)) {
    if (key === 'rules' || key === 'unit') continue;
    const price = priceKey(key);
    const label = price
      ? `USD per ${price.unit}${price.qualifier ? `, ${price.qualifier}` : ''}`
      : key.replace(/([a-z0-9])([A-Z])/g, '$1 $2');
    if (isObject(value)) tables.push(<PriceTable key={key} caption={label} value={value} />);
    else plain.push([label, cell(value)]);
  }
  return (
    <div class="prices">
      {plain.length ? <Details rows={plain} /> : null}
      {tables}
      {rules.length ? (
        <>
          <h3>Rules</h3>
          <ul class="rules">
            {rules.map((rule) => (
              <li key={rule}>{rule}</li>
            ))}
          </ul>
        </>
      ) : null}
    </div>
  );
}

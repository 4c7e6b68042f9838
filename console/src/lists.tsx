import type { ComponentChildren, ComponentType } from 'preact';
import { useState } from 'preact/hooks';
import { api } from './api';
import { Empty, ErrorNotice, InputField, Loading, Pager } from './components';
import { useInterval, useLoad, type Loaded } from './hooks';
import { navigate, useLocation } from './router';

/**
 * The cursor-paged lists (tasks, batches, webhook deliveries): filters kept in the URL, a form to change them, and
 * the list of the API's pages with its toolbar and pager.
 */

/** A page of a list API: its items and the cursor of the next page (null on the last). */
export interface Paged<T> {
  items: T[];
  nextCursor: string | null;
}

const PAGE_SIZE = 20;

/**
 * Filters kept in the page's URL query (never secrets), so a reload or a shared link keeps them. Returns the
 * current values of `names` and a setter that replaces the URL.
 */
function useQueryFilters<N extends string>(
  names: readonly N[],
): [Record<N, string>, (values: Partial<Record<N, string>>) => void] {
  const { path, query } = useLocation();
  const values = Object.fromEntries(names.map((n) => [n, query.get(n) ?? ''])) as Record<N, string>;
  const set = (next: Partial<Record<N, string>>) => {
    const params = new URLSearchParams();
    for (const name of names) {
      const value = (next[name] ?? '').trim();
      if (value) params.set(name, value);
    }
    const search = params.toString();
    navigate(search ? `${path}?${search}` : path, true);
  };
  return [values, set];
}

/** A YYYY-MM-DD day (local) as the ISO instant it starts at; `end` gives the start of the next day. */
function dayBound(day: string, end = false): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined;
  const [y, m, d] = day.split('-').map(Number);
  const date = new Date(y, m - 1, d + (end ? 1 : 0));
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

export interface CursorPages<T> {
  list: Loaded<Paged<T>>;
  items: T[] | undefined;
  /** The page on screen, from 1. */
  page: number;
  hasPrevious: boolean;
  /** Whether any filter is set. */
  filtered: boolean;
  next(cursor: string): void;
  previous(): void;
}

/**
 * A list API (`path`) read a page at a time with the filters as its query; the days `from` and `to` become
 * createdAfter and createdBefore. Keeps the cursor of the page on screen and a stack of the cursors of the pages
 * before it (the first page's cursor is undefined). Reset it by remounting (a `key` made of the filters). With
 * `follow`, the page is read again every `ms` while an item on it is `active` (a task still running, say).
 */
export function useCursorPages<T>(
  path: string,
  filters: Record<string, string>,
  follow?: { ms: number; active(item: T): boolean },
  /** The list's names for the bounds of the days `from` and `to` (the logs take `from` and `to` themselves). */
  bounds: [string, string] = ['createdAfter', 'createdBefore'],
): CursorPages<T> {
  const [stack, setStack] = useState<(string | undefined)[]>([]);
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const { from, to, ...rest } = filters;
  const list = useLoad(
    () =>
      api<Paged<T>>(path, {
        query: {
          ...rest,
          [bounds[0]]: dayBound(from),
          [bounds[1]]: dayBound(to, true),
          limit: PAGE_SIZE,
          cursor,
        },
      }),
    [cursor],
  );
  const items = list.data?.items;
  useInterval(list.reload, follow?.ms ?? 0, !!follow && !!items?.some(follow.active));
  return {
    list,
    items,
    page: stack.length + 1,
    hasPrevious: stack.length > 0,
    filtered: Object.values(filters).some(Boolean),
    next(nextCursor: string) {
      setStack((s) => [...s, cursor]);
      setCursor(nextCursor);
    },
    previous() {
      setCursor(stack[stack.length - 1]);
      setStack(stack.slice(0, -1));
    },
  };
}

/** What a filter field edits: one value of the form's draft. */
export interface FilterValue {
  value: string;
  onValue(value: string): void;
}

/**
 * A list's filter form: `children` lays out the fields, each bound to a filter by `field(name)`. The draft is
 * applied on submit; "Clear filters" (shown while a filter is set) applies empty ones.
 */
function FilterForm<N extends string>({
  label,
  filters,
  onApply,
  children,
}: {
  label: string;
  filters: Record<N, string>;
  onApply(next: Record<N, string>): void;
  children(field: (name: N) => FilterValue): ComponentChildren;
}) {
  const [draft, setDraft] = useState(filters);
  const names = Object.keys(filters) as N[];
  const field = (name: N): FilterValue => ({
    value: draft[name],
    onValue: (value) => setDraft({ ...draft, [name]: value }),
  });
  return (
    <form
      class="filters list-filters"
      aria-label={label}
      onSubmit={(event) => {
        event.preventDefault();
        onApply(draft);
      }}
    >
      {children(field)}
      <div class="filter-actions">
        <button type="submit" class="button">
          Apply filters
        </button>
        {names.some((name) => filters[name]) ? (
          <button
            type="button"
            class="button secondary"
            onClick={() => onApply(Object.fromEntries(names.map((name) => [name, ''])) as Record<N, string>)}
          >
            Clear filters
          </button>
        ) : null}
      </div>
    </form>
  );
}

/** A filter on an id: free text, without spelling checks or autocomplete. */
export function IdFilter(props: { id: string; label: string } & FilterValue) {
  return <InputField type="text" spellcheck={false} autocomplete="off" {...props} />;
}

type DayRange = 'from' | 'to';

/**
 * A list with its filters in the URL: the filter form (`fields`, then the days `from` and `to`, ids
 * `<idPrefix>-from` and `-to`) and the `list` of the applied filters. Both start afresh when the filters change.
 */
export function FilteredList<N extends string>({
  names,
  label,
  idPrefix,
  days = ['Created from', 'Created to'],
  fields,
  list: List,
}: {
  /** The filters, in the order of the URL's query. */
  names: readonly (N | DayRange)[];
  /** The form's name: "Task filters". */
  label: string;
  idPrefix: string;
  /** The labels of the day fields. */
  days?: [string, string];
  fields(field: (name: N | DayRange) => FilterValue): ComponentChildren;
  list: ComponentType<{ filters: Record<N | DayRange, string> }>;
}) {
  const [filters, setFilters] = useQueryFilters(names);
  const key = names.map((name) => filters[name]).join('|');
  return (
    <>
      <FilterForm key={`f${key}`} label={label} filters={filters} onApply={setFilters}>
        {(field) => (
          <>
            {fields(field)}
            <InputField id={`${idPrefix}-from`} label={days[0]} type="date" {...field('from')} />
            <InputField id={`${idPrefix}-to`} label={days[1]} type="date" {...field('to')} />
          </>
        )}
      </FilterForm>
      <List key={`l${key}`} filters={filters} />
    </>
  );
}

/**
 * A page of a cursor-paged list: the page line and Refresh, the load error, "Loading <noun>", the empty list's text
 * (or "No <noun> match these filters."), the rows (`children`) and the pager.
 */
export function PagedList<T>({
  pages,
  noun,
  count,
  empty,
  banner,
  children,
}: {
  pages: CursorPages<T>;
  /** What the list holds, in the plural: "tasks". */
  noun: string;
  /** How many items the page holds, as words; the page line then tells it, as a live region. */
  count?(n: number): string;
  /** The text of an empty list when no filter is set. */
  empty: ComponentChildren;
  /** A notice under the toolbar. */
  banner?: ComponentChildren;
  children(items: T[]): ComponentChildren;
}) {
  const { list, items } = pages;
  return (
    <>
      <div class="list-toolbar">
        <p class="muted" aria-live={count ? 'polite' : undefined}>
          Page {pages.page}
          {count && items ? ` · ${count(items.length)}` : null}
        </p>
        <button type="button" class="button secondary small" onClick={list.reload} disabled={list.loading}>
          Refresh
        </button>
      </div>
      {banner}
      <ErrorNotice error={list.error} />
      {!items ? (
        list.loading ? (
          <Loading what={`Loading ${noun}`} />
        ) : null
      ) : items.length === 0 ? (
        <Empty>{pages.filtered ? `No ${noun} match these filters.` : empty}</Empty>
      ) : (
        children(items)
      )}
      {items && (items.length > 0 || pages.hasPrevious) ? (
        <Pager
          hasPrevious={pages.hasPrevious}
          nextCursor={list.data?.nextCursor}
          onPrevious={pages.previous}
          onNext={pages.next}
        />
      ) : null}
    </>
  );
}

import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiFailure } from '../api';
import {
  Card,
  CopyButton,
  Details,
  Empty,
  ErrorNotice,
  InputField,
  Link,
  Loading,
  numeric,
  PageHeader,
  TableHead,
  TableWrap,
} from '../components';
import { useLoad } from '../hooks';
import { navigate } from '../router';
import {
  buildInput,
  fieldNamed,
  initialValues,
  SchemaForm,
  type FormValues,
  type JsonSchema,
} from '../schema-form';
import { accountInView, session } from '../session';
import { PriceDetails, priceSummary } from './models/pricing';
import { loadModels, type ModelSummary } from './tasks/common';
import { rememberInput } from './tasks/submitted';

/** GET /api/v1/models/{idOrSlug} of a task model (src/catalog/index.ts describe()). */
interface ModelDetailView extends ModelSummary {
  family?: string;
  endpoints?: Record<string, string>;
  inputSchema?: JsonSchema;
  pricing?: Record<string, unknown>;
  polling?: {
    workload: string;
    firstPollSeconds: number | number[];
    intervalSeconds: number | number[];
  }[];
  failCodes?: string[];
}

/** The catalog is read with an API key: an admin picks an account first. */
function NeedsAccount() {
  return (
    <p class="notice notice-info">
      The catalog is read for an account. Pick one on the <Link to="/admin">Admin</Link> page first.
    </p>
  );
}

const adminWithoutAccount = () => session()?.kind === 'admin' && !accountInView();

function Kind({ category }: { category: string }) {
  return <span class={`badge badge-kind badge-${category}`}>{category}</span>;
}

export function Models(_props: { params: Record<string, string> }) {
  const blocked = adminWithoutAccount();
  const catalog = useLoad(async () => {
    if (blocked) return null;
    const models = await loadModels();
    const details = await Promise.all(
      models
        .filter((m) => m.integration_type === 'task_api')
        .map((m) => api<ModelDetailView>(`/api/v1/models/${encodeURIComponent(m.id)}`).catch(() => null)),
    );
    const pricing = new Map(details.filter((d) => d !== null).map((d) => [d.id, d.pricing]));
    return { models, pricing };
  }, [blocked]);
  const tasks = catalog.data?.models.filter((m) => m.integration_type === 'task_api') ?? [];
  const gateway = catalog.data?.models.filter((m) => m.integration_type !== 'task_api') ?? [];
  return (
    <div>
      <PageHeader title="Models" />
      {blocked ? <NeedsAccount /> : null}
      <ErrorNotice error={catalog.error} />
      {catalog.loading && !catalog.data ? <Loading what="Loading the catalog" /> : null}
      {catalog.data ? (
        <>
          <section aria-labelledby="task-models">
            <h2 id="task-models" class="section-title">
              Generation models
            </h2>
            <p class="muted">
              Image, video and audio models of the task API. Open one to see its prices and input fields, and
              submit a task.
            </p>
            {tasks.length === 0 ? (
              <Empty>No task models are configured.</Empty>
            ) : (
              <ul class="model-grid">
                {tasks.map((m) => (
                  <li key={m.id} class="card model-card">
                    <h3>
                      <Link to={`/models/${encodeURIComponent(m.id)}`}>{m.displayName}</Link>
                    </h3>
                    <p class="model-meta">
                      <code>{m.id}</code> <Kind category={m.category} />
                    </p>
                    <p class="model-price">{priceSummary(catalog.data!.pricing.get(m.id))}</p>
                  </li>
                ))}
              </ul>
            )}
          </section>
          {gateway.length ? (
            <section aria-labelledby="gateway-models">
              <h2 id="gateway-models" class="section-title">
                LLM gateway formats
              </h2>
              <p class="muted">Text models are called through the gateway with each vendor's own SDK.</p>
              <TableWrap label="Gateway formats table">
                <TableHead columns={['Format', 'Id', 'Vendor']} />
                <tbody>
                  {gateway.map((m) => (
                    <tr key={m.id}>
                      <td>
                        <Link to={`/models/${encodeURIComponent(m.id)}`}>{m.displayName}</Link>
                      </td>
                      <td class="mono">{m.id}</td>
                      <td>{typeof m.vendor === 'string' ? m.vendor : '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </TableWrap>
            </section>
          ) : null}
        </>
      ) : null}
    </div>
  );
}

export function ModelDetail({ params }: { params: Record<string, string> }) {
  const modelId = params.modelId;
  const blocked = adminWithoutAccount();
  const loaded = useLoad(
    () =>
      blocked ? Promise.resolve(null) : api<ModelDetailView>(`/api/v1/models/${encodeURIComponent(modelId)}`),
    [modelId, blocked],
  );
  const model =
    loaded.data && (loaded.data.id === modelId || loaded.data.slug === modelId) ? loaded.data : null;
  return (
    <div>
      <PageHeader title={model?.displayName ?? modelId}>
        <Link class="button secondary" to="/models">
          All models
        </Link>
      </PageHeader>
      {blocked ? <NeedsAccount /> : null}
      <ErrorNotice error={loaded.error} />
      {!model ? (
        loaded.loading ? (
          <Loading what="Loading the model" />
        ) : null
      ) : model.integration_type === 'task_api' ? (
        <TaskModel model={model} />
      ) : (
        <GatewayModel model={model} />
      )}
    </div>
  );
}

function GatewayModel({ model }: { model: ModelDetailView }) {
  const rows: [string, ComponentChildren][] = Object.entries(model)
    .filter(([key]) => key !== 'displayName')
    .map(([key, value]) => [key, typeof value === 'string' ? <code>{value}</code> : JSON.stringify(value)]);
  return (
    <Card title="Gateway format">
      <p class="muted">
        Call this format through Genway with the vendor's SDK: point its base URL at Genway and use a Genway
        API key. Usage is charged to the account.
      </p>
      <Details rows={rows} />
    </Card>
  );
}

function TaskModel({ model }: { model: ModelDetailView }) {
  const schema = model.inputSchema ?? {};
  return (
    <>
      <p class="model-meta">
        <code>{model.id}</code> <Kind category={model.category} />
        {model.family ? <span class="muted"> family {model.family}</span> : null}
      </p>
      <TryIt key={model.id} model={model} schema={schema} />
      <Card title="Prices">
        <PriceDetails pricing={model.pricing} />
      </Card>
      <div class="grid">
        {model.polling?.length ? (
          <Card title="Polling guidance">
            <TableWrap label="Polling guidance table">
              <TableHead columns={['Workload', numeric('First poll'), numeric('Then every')]} />
              <tbody>
                {model.polling.map((row) => (
                  <tr key={row.workload}>
                    <td class="wrap">{row.workload}</td>
                    <td class="num">{seconds(row.firstPollSeconds)}</td>
                    <td class="num">{seconds(row.intervalSeconds)}</td>
                  </tr>
                ))}
              </tbody>
            </TableWrap>
            <p class="hint">Or send Prefer: wait=N (up to 60 s) to hold the answer until the task ends.</p>
          </Card>
        ) : null}
        {model.failCodes?.length ? (
          <Card title="Failure codes">
            <ul class="code-list">
              {model.failCodes.map((code) => (
                <li key={code}>
                  <code>{code}</code>
                </li>
              ))}
            </ul>
          </Card>
        ) : null}
      </div>
    </>
  );
}

function seconds(value: number | number[]): string {
  return Array.isArray(value) ? `${value.join(' to ')} s` : `${value} s`;
}

function TryIt({ model, schema }: { model: ModelDetailView; schema: JsonSchema }) {
  const [values, setValues] = useState<FormValues>(() => initialValues(schema));
  const [callbackUrl, setCallbackUrl] = useState('');
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<Error | undefined>();
  const formRef = useRef<HTMLFormElement>(null);
  const input = useMemo(() => buildInput(schema, values), [schema, values]);
  const body: Record<string, unknown> = callbackUrl.trim()
    ? { request_type: 'callback', callback_url: callbackUrl.trim(), input }
    : { input };
  const bodyText = JSON.stringify(body, null, 2);
  const named = fieldNamed(error?.message);
  const invalid = named && error ? { field: named, message: error.message } : null;
  const required = schema.required?.length ?? 0;

  // Focus the field the API's refusal named, so the fix is one step away.
  useEffect(() => {
    if (!invalid) return;
    const control = formRef.current?.querySelector<HTMLElement>(`#try-${CSS.escape(invalid.field)}`);
    control?.focus();
  }, [error]);

  return (
    <div class="try-it">
      <Card title="Try it">
        <form
          ref={formRef}
          noValidate
          onSubmit={async (event) => {
            event.preventDefault();
            setPending(true);
            setError(undefined);
            try {
              const created = await api<{ taskId: string }>(
                `/api/v1/generateTask/${encodeURIComponent(model.id)}`,
                { method: 'POST', body },
              );
              rememberInput(created.taskId, input);
              navigate(`/tasks/${encodeURIComponent(created.taskId)}`);
            } catch (err) {
              setError(err as Error);
              setPending(false);
            }
          }}
        >
          <p class="muted">
            Defaults are filled in{required ? '; fields marked * are required' : ''}. Write a prompt and
            submit: the task runs and its page shows the result when it is ready.
          </p>
          <SchemaForm
            schema={schema}
            values={values}
            onChange={(next) => {
              setValues(next);
              if (error && !(error instanceof ApiFailure && error.status >= 500)) setError(undefined);
            }}
            idPrefix="try"
            invalid={invalid}
          />
          <details class="more-options">
            <summary>Delivery options</summary>
            <InputField
              id="try-callback-url"
              label="Callback URL"
              hint="Optional. Genway POSTs the task's final status here, signed with the webhook secret (an HTTPS URL)."
              type="url"
              inputMode="url"
              spellcheck={false}
              autocomplete="off"
              value={callbackUrl}
              onValue={setCallbackUrl}
            />
          </details>
          {error ? (
            <p class="notice notice-error" role="alert">
              {error.message}
            </p>
          ) : null}
          <div class="form-actions">
            <button type="submit" class="button" disabled={pending}>
              {pending ? 'Submitting…' : 'Submit sandbox task'}
            </button>
            <button
              type="button"
              class="button secondary"
              onClick={() => {
                setValues(initialValues(schema));
                setCallbackUrl('');
                setError(undefined);
              }}
            >
              Reset to defaults
            </button>
          </div>
        </form>
      </Card>
      <Card title="Request body">
        <p class="hint">
          <code>POST /api/v1/generateTask/{model.id}</code>
        </p>
        <pre class="request-preview">{bodyText}</pre>
        <div class="card-actions">
          <CopyButton text={bodyText} label="Copy request body" />
        </div>
      </Card>
    </div>
  );
}

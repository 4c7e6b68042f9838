import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api';
import {
  Badge,
  Card,
  ConfirmDialog,
  Details,
  Empty,
  ErrorNotice,
  Link,
  Loading,
  numeric,
  PageHeader,
  SelectField,
  TableHead,
  TableWrap,
} from '../components';
import { usd, when } from '../format';
import { useInterval, useLoad } from '../hooks';
import { FilteredList, IdFilter, PagedList, useCursorPages } from '../lists';
import {
  duration,
  extensionOf,
  isActiveState,
  loadTaskModels,
  mediaKindOf,
  ModelSelect,
  resultUrls,
  type ModelSummary,
  type TaskView,
} from './tasks/common';
import { submittedInput } from './tasks/submitted';

const FILTERS = ['model', 'state', 'batchId', 'from', 'to'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;
const STATES = ['pending', 'processing', 'success', 'failed'];
/** How often a page with a running task asks again. */
const POLL_MS = 1500;

export function Tasks(_props: { params: Record<string, string> }) {
  return (
    <div>
      <PageHeader title="Tasks">
        <Link class="button" to="/models">
          New task
        </Link>
      </PageHeader>
      <FilteredList
        names={FILTERS}
        label="Task filters"
        idPrefix="task-filter"
        fields={(field) => (
          <>
            <ModelSelect id="task-filter-model" {...field('model')} />
            <SelectField
              id="task-filter-state"
              label="State"
              any="All states"
              options={STATES}
              {...field('state')}
            />
            <IdFilter id="task-filter-batch" label="Batch id" {...field('batchId')} />
          </>
        )}
        list={TaskList}
      />
    </div>
  );
}

function TaskList({ filters }: { filters: Filters }) {
  // While a task on screen runs, the list follows it.
  const pages = useCursorPages<TaskView>('/api/v1/tasks', filters, {
    ms: 2000,
    active: (t) => isActiveState(t.state),
  });
  return (
    <Card title="Task list">
      <PagedList
        pages={pages}
        noun="tasks"
        count={(n) => `${n} task${n === 1 ? '' : 's'}`}
        empty={
          <>
            No tasks yet. Pick a model on the <Link to="/models">Models</Link> page and submit one.
          </>
        }
      >
        {(items) => (
          <TableWrap label="Tasks">
            <TableHead columns={['Task', 'Model', 'State', 'Created', 'Took', numeric('Cost')]} />
            <tbody>
              {items.map((task) => (
                <tr key={task.taskId}>
                  <td class="mono">
                    <Link to={`/tasks/${encodeURIComponent(task.taskId)}`}>{task.taskId}</Link>
                  </td>
                  <td>{task.model}</td>
                  <td>
                    <TaskState task={task} />
                  </td>
                  <td>{when(task.createTime)}</td>
                  <td>{duration(task.costTime)}</td>
                  <td class="num">
                    {usd(task.chargeUsd)}
                    {task.state === 'failed' ? <span class="muted"> refunded</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </TableWrap>
        )}
      </PagedList>
    </Card>
  );
}

const cancelledTask = (task: TaskView) => task.state === 'failed' && task.failCode === 'CANCELLED';

/** The state badge; a cancelled task (failed with CANCELLED) says so. */
function TaskState({ task }: { task: TaskView }) {
  return <Badge status={cancelledTask(task) ? 'cancelled' : task.state} />;
}

export function TaskDetail({ params }: { params: Record<string, string> }) {
  const taskId = params.taskId;
  const loaded = useLoad(() => api<TaskView>(`/api/v1/tasks/${encodeURIComponent(taskId)}`), [taskId]);
  const models = useLoad(loadTaskModels, []);
  const [confirming, setConfirming] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const task = loaded.data?.taskId === taskId ? loaded.data : undefined;
  const active = isActiveState(task?.state);
  useInterval(loaded.reload, POLL_MS, active);
  const model = models.data?.find((m) => m.id === task?.model);

  return (
    <div>
      <PageHeader title={`Task ${taskId}`}>
        {active ? (
          <button type="button" class="button danger" onClick={() => setConfirming(true)}>
            Cancel task
          </button>
        ) : null}
        <Link class="button secondary" to={`/logs?taskId=${encodeURIComponent(taskId)}`}>
          Request log
        </Link>
        <Link class="button secondary" to="/tasks">
          All tasks
        </Link>
      </PageHeader>
      <ErrorNotice error={task ? (active ? undefined : loaded.error) : loaded.error} />
      {notice ? (
        <p class="notice notice-ok" role="status">
          {notice}
        </p>
      ) : null}
      {!task ? (
        loaded.loading ? (
          <Loading what="Loading the task" />
        ) : null
      ) : (
        <>
          <StatusLine task={task} />
          <Outcome task={task} model={model} />
          <div class="grid">
            <Card title="Summary">
              <Details
                rows={[
                  ['Task id', <code key="id">{task.taskId}</code>],
                  ['State', <TaskState key="s" task={task} />],
                  ['Model', <Link to={`/models/${encodeURIComponent(task.model)}`}>{task.model}</Link>],
                  ['Request type', task.requestType ?? '—'],
                  ...(task.batchId
                    ? ([
                        [
                          'Batch',
                          <Link
                            key="b"
                            to={`/batches/${encodeURIComponent(task.batchId)}?model=${encodeURIComponent(task.model)}`}
                          >
                            {task.batchId}
                          </Link>,
                        ],
                        ['Batch item', task.clientItemId ?? '—'],
                      ] as [string, ComponentChildren][])
                    : []),
                ]}
              />
            </Card>
            <Card title="Timeline">
              <Timeline task={task} />
            </Card>
            <Card title="Billing">
              <Billing task={task} />
            </Card>
          </div>
          <InputCard task={task} />
          <details class="raw">
            <summary>Task record as the API returns it</summary>
            <pre>{JSON.stringify(task, null, 2)}</pre>
          </details>
        </>
      )}
      <ConfirmDialog
        open={confirming}
        title="Cancel this task?"
        confirmLabel="Yes, cancel the task"
        danger
        onClose={() => setConfirming(false)}
        onConfirm={async () => {
          const answer = await api<TaskView & { cancelled: boolean }>(
            `/api/v1/tasks/${encodeURIComponent(taskId)}/cancel`,
            { method: 'POST' },
          );
          setNotice(
            answer.cancelled
              ? 'Task cancelled. Its charge is refunded.'
              : `The task had already ended (${answer.state}); nothing changed.`,
          );
          loaded.reload();
        }}
      >
        <p>
          The task stops and ends as failed with code CANCELLED. Its charge is refunded in full. A task that
          finishes first is left as it is.
        </p>
      </ConfirmDialog>
    </div>
  );
}

/** One line that says where the task stands; announced when it changes. */
function StatusLine({ task }: { task: TaskView }) {
  let text: string;
  if (task.state === 'pending') text = 'Queued. This page refreshes by itself until the task ends.';
  else if (task.state === 'processing') text = 'Running. This page refreshes by itself until the task ends.';
  else if (task.state === 'success') text = `Succeeded in ${duration(task.costTime)}.`;
  else if (cancelledTask(task)) text = 'Cancelled. The charge was refunded.';
  else text = 'Failed. The charge was refunded.';
  return (
    <p class="status-line" role="status">
      <TaskState task={task} /> <span>{text}</span>
    </p>
  );
}

function Outcome({ task, model }: { task: TaskView; model: ModelSummary | undefined }) {
  if (task.state === 'failed') {
    return (
      <Card title={cancelledTask(task) ? 'Cancelled' : 'Error'} class="card-error">
        <Details
          rows={[
            ['Code', <code key="c">{task.failCode ?? '—'}</code>],
            ['Message', task.failMsg ?? '—'],
          ]}
        />
      </Card>
    );
  }
  if (task.state !== 'success') {
    return (
      <Card title="Result">
        <p class="muted">The result appears here when the task finishes.</p>
      </Card>
    );
  }
  const urls = resultUrls(task);
  return (
    <Card title="Result">
      {urls.length === 0 ? (
        <Empty>The task succeeded without result files.</Empty>
      ) : (
        <div class="results">
          {urls.map((url, i) => (
            <ResultMedia key={url} url={url} n={i + 1} category={model?.category} />
          ))}
        </div>
      )}
      <p class="hint">Result links are signed and expire 24 hours after the task completed.</p>
    </Card>
  );
}

/** A result file: an image, a video or an audio player by its type, and a download link. */
function ResultMedia({ url, n, category }: { url: string; n: number; category?: string }) {
  const kind = mediaKindOf(url, category);
  const ext = extensionOf(url);
  const name = kind === 'file' ? `Result file ${n}` : `Result ${kind} ${n}`;
  return (
    <figure class="preview">
      {kind === 'image' ? <img src={url} alt={name} /> : null}
      {kind === 'video' ? (
        <video controls preload="metadata" src={url} aria-label={name}>
          <a href={url}>{name}</a>
        </video>
      ) : null}
      {kind === 'audio' ? (
        <audio controls preload="metadata" src={url} aria-label={name}>
          <a href={url}>{name}</a>
        </audio>
      ) : null}
      <figcaption>
        <a href={url} target="_blank" rel="noopener noreferrer" download>
          Download {name.toLowerCase()}
          {ext ? ` (${ext.toUpperCase()})` : ''}
        </a>
      </figcaption>
    </figure>
  );
}

function Timeline({ task }: { task: TaskView }) {
  const terminal = !isActiveState(task.state);
  const end = task.state === 'success' ? 'Succeeded' : cancelledTask(task) ? 'Cancelled' : 'Failed';
  const steps: { label: string; at: string; done: boolean; current: boolean }[] = [
    { label: 'Submitted', at: when(task.createTime), done: true, current: task.state === 'pending' },
    {
      label: 'Processing',
      at: task.state === 'pending' ? 'waiting' : task.state === 'processing' ? 'in progress' : 'done',
      done: task.state !== 'pending',
      current: task.state === 'processing',
    },
    {
      label: terminal ? end : 'Finished',
      at: terminal ? `${when(task.completeTime)} · after ${duration(task.costTime)}` : 'not yet',
      done: terminal,
      current: terminal,
    },
  ];
  return (
    <ol class="timeline">
      {steps.map((step) => (
        <li
          key={step.label}
          class={step.done ? 'done' : 'todo'}
          aria-current={step.current ? 'step' : undefined}
        >
          <strong>{step.label}</strong>
          <span class="muted">{step.at}</span>
        </li>
      ))}
    </ol>
  );
}

function Billing({ task }: { task: TaskView }) {
  const charged = task.chargeUsd;
  let refund: number | undefined;
  if (typeof task.refundUsd === 'number') refund = task.refundUsd;
  else if (task.state === 'failed') refund = charged;
  else if (task.state === 'success' && !task.billing) refund = 0;
  const rows: [string, ComponentChildren][] = [
    ['Charged at submission', usd(charged)],
    [
      'Refunded',
      refund === undefined
        ? isActiveState(task.state)
          ? 'not yet (a failed or cancelled task is refunded in full)'
          : 'settled by the actual duration (see below)'
        : usd(refund),
    ],
  ];
  if (refund !== undefined && charged !== undefined) rows.push(['Net cost', usd(charged - refund)]);
  if (task.billing) {
    for (const [name, value] of Object.entries(task.billing)) rows.push([name, String(value)]);
  }
  return <Details rows={rows} />;
}

function InputCard({ task }: { task: TaskView }) {
  const fromApi = task.input !== undefined;
  const input = fromApi ? task.input : submittedInput(task.taskId);
  return (
    <Card title="Input">
      {input === undefined ? (
        <p class="muted">
          The task record does not include its input; it is shown here for tasks submitted from this browser
          tab.
        </p>
      ) : (
        <>
          {!fromApi ? <p class="hint">As submitted from this browser tab.</p> : null}
          <pre>{JSON.stringify(input, null, 2)}</pre>
        </>
      )}
    </Card>
  );
}

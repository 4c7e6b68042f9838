import type { IncomingMessage, ServerResponse } from 'node:http';
import { ERROR_STATUS } from '../errors';
import type { BodyCapture, BodyModes } from './bodies';
import { clientIpOf, userAgentOf } from './client';
import type { LogWriter } from './writer';
import type { RequestLogRow, Surface } from './types';

/** Who called, as the key gate admitted it (the accounts module's AuthContext, structurally). */
export interface Caller {
  readonly keyId: string;
  readonly accountId: string;
}

/** Token counts of one call's answer (the gateway's TokenUsage, structurally). */
interface Tokens {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  reasoning: number;
}

/** The proxy's timing of one exchange (performance.now() instants), structurally. */
interface ExchangeTiming {
  headers?: number;
  status?: number;
}

const NO_ANSWER: Record<number, string> = { 502: 'upstream_unreachable', 504: 'upstream_timeout' };
const CODE_OF_STATUS = new Map<number, string>(
  Object.entries(ERROR_STATUS).map(([code, status]) => [status as number, code]),
);

/** The error type of a finished call: Genway's own code when it refused, else the status or the cut. */
function errorTypeOf(
  status: number,
  finished: boolean,
  refused: string | undefined,
  answered: boolean,
): string | null {
  if (status >= 400)
    return refused ?? (answered ? `upstream_${status}` : (NO_ANSWER[status] ?? `upstream_${status}`));
  return finished ? null : 'response_cut';
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/**
 * One gateway call's row, built as the call goes and made once both its response closed and the proxy's exchange is
 * over (a stream the client left may be read on for its usage after the response closed). A call Genway refused
 * before any upstream request is made when its response closes. The writer takes it later, with the rows of other
 * calls (LogWriter.pushCallRow).
 */
export class GatewayCallLog {
  private caller: Caller | null = null;
  private model: string | null = null;
  private input = -1;
  private output = 0;
  private cacheRead = 0;
  private cacheWrite = 0;
  private reasoning = 0;
  private costMicros = 0;
  private refusedAs: string | undefined;
  private timing: ExchangeTiming | undefined;
  private exchanged = false;
  private status = 0;
  private finished = false;
  private end = 0;
  private forwarded = false;
  private closedSeen = false;
  private pending: Promise<unknown> | undefined;
  private capture: BodyCapture | undefined;
  private written = false;
  private readonly time = Date.now();

  constructor(
    private readonly log: RequestLog,
    private readonly req: IncomingMessage,
    private readonly requestId: string,
    private readonly start: number,
    private readonly route: string,
    private upstream: string,
  ) {}

  /** The upstream's model, when a route sent the call to a target (else the model the client named). */
  private upstreamModel: string | null | undefined;

  /** A route's target served the call: its upstream and the model's name there. */
  routed(upstream: string, model: string): void {
    this.upstream = upstream;
    this.upstreamModel = model;
  }

  /** The key was admitted (refusals after this point are the account's to see). */
  admitted(caller: Caller): void {
    this.caller = caller;
  }

  /** Forwarding starts: the model it runs; bodies are kept from here when the caller's mode says so. */
  request(caller: Caller, model: string | undefined, body: Buffer | null, res: ServerResponse): void {
    this.caller = caller;
    this.model = model ?? null;
    const mode = this.log.bodyMode(caller);
    if (mode !== 'off') this.capture = this.log.captureBodies(mode, this.req, body, res);
  }

  /** What the call's answer used and cost (the gateway's metering computed it). */
  usage(readings: readonly { usage: Tokens }[], costMicros: number): void {
    if (this.input < 0) this.input = 0;
    for (const { usage: u } of readings) {
      this.input += u.input;
      this.output += u.output;
      this.cacheRead += u.cacheRead;
      this.cacheWrite += u.cacheWrite;
      this.reasoning += u.reasoning;
    }
    this.costMicros += costMicros;
  }

  /** A WebSocket turn: the model it ran (no body is kept for frames). */
  turn(model: string | undefined): void {
    this.model = model ?? null;
  }

  refused(code: string): void {
    this.refusedAs = code;
  }

  /** The proxy's exchange is over; `recording` settles once its usage is metered (a compressed answer). */
  exchange(timing: ExchangeTiming, recording?: Promise<unknown>): void {
    this.timing = timing;
    this.exchanged = true;
    if (recording) this.pending = recording;
    this.maybeWrite();
  }

  /** The client's response closed. `forwarded`: the proxy took the call (its exchange then ends it). */
  closed(status: number, finished: boolean, forwarded: boolean): void {
    this.status = status;
    this.finished = finished;
    this.end = performance.now();
    this.forwarded = forwarded;
    this.closedSeen = true;
    this.maybeWrite();
  }

  private maybeWrite(): void {
    if (this.written || !this.closedSeen || (this.forwarded && !this.exchanged)) return;
    if (this.pending) {
      const pending = this.pending;
      this.pending = undefined;
      const next = () => this.maybeWrite();
      pending.then(next, next); // a failed metering was logged where it failed; the row goes all the same
      return;
    }
    this.written = true;
    const metered = this.input >= 0;
    const headers = this.timing?.headers;
    const row: RequestLogRow = {
      time: this.time,
      requestId: this.requestId,
      accountId: this.caller?.accountId ?? null,
      keyId: this.caller?.keyId ?? null,
      surface: 'gateway',
      method: this.req.method ?? 'GET',
      route: this.route,
      model: this.model,
      upstream: this.upstream,
      upstreamModel: this.upstreamModel === undefined ? this.model : this.upstreamModel,
      status: this.status,
      errorType: errorTypeOf(this.status, this.finished, this.refusedAs, headers !== undefined),
      inputTokens: metered ? this.input : null,
      outputTokens: metered ? this.output : null,
      cachedTokens: metered ? this.cacheRead : null,
      cacheWriteTokens: metered ? this.cacheWrite : null,
      reasoningTokens: metered ? this.reasoning : null,
      costMicros: this.costMicros,
      latencyMs: round(this.end - this.start),
      ttfbMs: headers === undefined ? null : round(headers - this.start),
      userAgent: userAgentOf(this.req),
      clientIp: clientIpOf(this.req, this.log.trustProxy),
      taskId: null,
      batchId: null,
      requestBytes: null,
      responseBytes: null,
    };
    this.log.write(row, this.capture);
  }
}

/** One task-API submission (a single task, or a batch and its items), written when its response closes. */
export interface SubmissionLog {
  /** The task was created and charged `chargeMicros`. */
  accepted(taskId: string, chargeMicros: number, provider?: string): void;
}

/** A batch item's outcome, as the batch service reports it. */
export interface BatchItemOutcome {
  taskId: string | null;
  /** `accepted` (charged), `reused` (an earlier task: nothing charged), `rejected` (with its error code). */
  outcome: 'accepted' | 'reused' | 'rejected';
  errorCode?: string;
  chargeMicros: number;
}

/** What a task row of a submission holds of its own. */
interface TaskRowExtra {
  taskId: string | null;
  batchId: string | null;
  costMicros: number;
  upstream: string | null;
}

const ITEM_STATUS: Record<string, number> = { insufficient_balance: 402, invalid_parameter_value: 400 };

/** Builds request-log rows and hands them to the writer: the one object the gateway and the task API call. */
export class RequestLog {
  constructor(
    private readonly writer: LogWriter,
    readonly trustProxy: boolean,
    private readonly bodies: BodyModes,
  ) {}

  /** Starts the row of a gateway call (one small object; nothing is written until the call is over). */
  gatewayCall(
    req: IncomingMessage,
    requestId: string,
    start: number,
    route: string,
    upstream: string,
  ): GatewayCallLog {
    return new GatewayCallLog(this, req, requestId, start, route, upstream);
  }

  /**
   * A turn of the Responses WebSocket mode that the vendor answered: a call of its own (its usage and price), under
   * the upgrade's request id; its latency is not timed (the turn's messages pass as frames).
   */
  webSocketTurn(
    req: IncomingMessage,
    requestId: string,
    caller: Caller,
    model: string | undefined,
    readings: readonly { usage: Tokens }[],
    costMicros: number,
    route: string,
    upstream: string,
  ): void {
    const call = new GatewayCallLog(this, req, requestId, performance.now(), route, upstream);
    call.admitted(caller);
    call.usage(readings, costMicros);
    call.turn(model);
    call.closed(200, true, false);
  }

  bodyMode(caller: Caller) {
    return this.bodies.modeFor(caller);
  }

  captureBodies(mode: 'metadata' | 'full', req: IncomingMessage, body: Buffer | null, res: ServerResponse) {
    return this.bodies.capture(mode, req, body, res);
  }

  /**
   * Hands a finished call's row to the writer: without kept bodies it waits to be taken with others
   * (LogWriter.pushCallRow); with them, it goes at once with its bodies (built off the response path, after it closed).
   */
  write(row: RequestLogRow, capture?: BodyCapture): void {
    if (!capture) return this.writer.pushCallRow(row);
    const kept = capture.finish(row);
    this.writer.pushRequest(row, kept);
  }

  /**
   * A task submission (`POST /api/v1/generateTask/{model}`): its row is written when the response closes, with the
   * status the client got; `accepted` adds the task and its charge.
   */
  submission(
    req: IncomingMessage,
    res: ServerResponse,
    caller: Caller,
    model: string,
    requestId: string,
    route: string,
  ): SubmissionLog {
    const row = this.taskRows(req, res, caller, model, requestId, route);
    let task: { taskId: string; chargeMicros: number; provider?: string } | undefined;
    res.once('close', () => {
      this.writer.pushRequest(
        row(res.statusCode, {
          taskId: task?.taskId ?? null,
          batchId: null,
          costMicros: task?.chargeMicros ?? 0,
          upstream: task?.provider ?? null,
        }),
      );
    });
    return { accepted: (taskId, chargeMicros, provider) => void (task = { taskId, chargeMicros, provider }) };
  }

  /**
   * A batch submission: one row per item it processed (rejected items with their status), written when the response
   * closes; a batch refused whole is one row with its status, and a replayed batch writes none (its items were
   * logged when they were submitted).
   */
  batch(
    req: IncomingMessage,
    res: ServerResponse,
    caller: Caller,
    model: string,
    requestId: string,
    route: string,
  ): (item: BatchItemOutcome, batchId: string) => void {
    const row = this.taskRows(req, res, caller, model, requestId, route);
    const items: { item: BatchItemOutcome; batchId: string }[] = [];
    res.once('close', () => {
      const status = res.statusCode;
      if (items.length === 0 && status < 400) return;
      if (items.length === 0) {
        this.writer.pushRequest(row(status, { taskId: null, batchId: null, costMicros: 0, upstream: null }));
        return;
      }
      for (const { item, batchId } of items) {
        const rejected = item.outcome === 'rejected';
        const itemRow = row(rejected ? (ITEM_STATUS[item.errorCode ?? ''] ?? 400) : status, {
          taskId: item.taskId,
          batchId,
          costMicros: item.outcome === 'accepted' ? item.chargeMicros : 0,
          upstream: null,
        });
        if (rejected) itemRow.errorType = item.errorCode ?? 'invalid_request';
        this.writer.pushRequest(itemRow);
      }
    });
    return (item, batchId) => void items.push({ item, batchId });
  }

  /**
   * The rows of one task-API submission: what they share is fixed when it arrives (time, caller, client), the rest
   * when its response closes (status, whether it finished, latency) and per row (task, batch, charge, provider).
   */
  private taskRows(
    req: IncomingMessage,
    res: ServerResponse,
    caller: Caller,
    model: string,
    requestId: string,
    route: string,
  ): (status: number, extra: TaskRowExtra) => RequestLogRow {
    const time = Date.now();
    const start = performance.now();
    return (status, extra) => ({
      time,
      requestId,
      accountId: caller.accountId,
      keyId: caller.keyId,
      surface: 'tasks' satisfies Surface,
      method: req.method ?? 'POST',
      route,
      model: model.slice(0, 128),
      upstream: extra.upstream,
      upstreamModel: null,
      status,
      errorType:
        status >= 400
          ? (CODE_OF_STATUS.get(status) ?? String(status))
          : res.writableFinished
            ? null
            : 'response_cut',
      inputTokens: null,
      outputTokens: null,
      cachedTokens: null,
      cacheWriteTokens: null,
      reasoningTokens: null,
      costMicros: extra.costMicros,
      latencyMs: round(performance.now() - start),
      ttfbMs: null,
      userAgent: userAgentOf(req),
      clientIp: clientIpOf(req, this.trustProxy),
      taskId: extra.taskId,
      batchId: extra.batchId,
      requestBytes: null,
      responseBytes: null,
    });
  }
}

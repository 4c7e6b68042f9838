import http from 'node:http';
import https from 'node:https';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

export interface OtlpExporterOptions {
  /** The traces URL, used as is (`.../v1/traces`). */
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

/** An OTLP endpoint's answer other than 2xx. */
export class OtlpExportError extends Error {
  constructor(readonly status: number) {
    super(`OTLP endpoint answered ${status}`);
    this.name = 'OtlpExportError';
  }
}

/**
 * OTLP/HTTP with JSON bodies, serialised by OpenTelemetry's own `JsonTraceSerializer` (the bytes its
 * exporter-trace-otlp-http sends). The transport is node:http, imported statically: the packaged exporter loads its
 * HTTP module with a dynamic `import()`, which a VM-sandboxed runtime (Jest) cannot run. A batch that fails is
 * reported to the span processor, which drops it: traces never hold requests back.
 */
export function createOtlpJsonExporter({ url, headers, timeoutMs }: OtlpExporterOptions): SpanExporter {
  const target = new URL(url);
  const secure = target.protocol === 'https:';
  const agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  const request = secure ? https.request : http.request;
  const pending = new Set<Promise<void>>();
  let stopped = false;

  const post = (body: Uint8Array) =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        target,
        {
          method: 'POST',
          agent,
          headers: {
            ...headers,
            'content-type': 'application/json',
            'content-length': body.byteLength,
          },
        },
        (res) => {
          res.resume(); // the answer (a partial-success note at most) is not needed
          res.once('end', () => {
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) resolve();
            else reject(new OtlpExportError(status));
          });
          res.once('error', reject);
        },
      );
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`OTLP export timed out after ${timeoutMs} ms`)));
      req.once('error', reject);
      req.end(body);
    });

  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
      if (stopped) return done({ code: ExportResultCode.FAILED, error: new Error('exporter is shut down') });
      const body = JsonTraceSerializer.serializeRequest(spans);
      if (!body) return done({ code: ExportResultCode.FAILED, error: new Error('spans did not serialise') });
      const sent = post(body).then(
        () => done({ code: ExportResultCode.SUCCESS }),
        (error: Error) => done({ code: ExportResultCode.FAILED, error }),
      );
      pending.add(sent);
      void sent.finally(() => pending.delete(sent));
    },
    async forceFlush(): Promise<void> {
      await Promise.all(pending);
    },
    async shutdown(): Promise<void> {
      stopped = true;
      await Promise.all(pending);
      agent.destroy();
    },
  };
}

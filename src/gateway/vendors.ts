import type { ServerResponse } from 'node:http';
import type { Config } from '../config';
import type { ApiError } from '../errors';

/** Writes one of Genway's own refusals (plain node:http: the gateway runs ahead of Express). */
export type VendorErrorRenderer = (
  res: ServerResponse,
  err: ApiError,
  headers: Record<string, string>,
) => void;

export type VendorName = 'anthropic' | 'openai' | 'gemini';

/** Which response format a vendor speaks, and so where its token usage sits. */
export type UsageFormat = 'messages' | 'responses' | 'generateContent';

export interface Vendor {
  readonly name: VendorName;
  readonly format: UsageFormat;
  /** The vendor's origin (and optional base path), without a trailing slash. */
  readonly origin: URL;
  readonly basePath: string;
  /** `anthropic-version` sent when the client sends none (messages vendor only). */
  readonly defaultVersion?: string;
  /** Header the vendor key travels in, lower case. */
  readonly keyHeader: string;
  /** Next vendor key of the pool (round robin); undefined when none is configured. */
  nextKey(): string | undefined;
  /** The key header's value for `key`. */
  keyHeaderValue(key: string): string;
  /** Genway's own refusals in this vendor's error shape, so the vendor's SDK raises its usual error class. */
  readonly renderError: VendorErrorRenderer;
}

type ErrorBody = (status: number, message: string) => unknown;

/** The messages vendor: `{"type":"error","error":{"type":...,"message":...}}`. */
const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  502: 'api_error',
  504: 'timeout_error',
  508: 'api_error',
};
const anthropicBody: ErrorBody = (status, message) => ({
  type: 'error',
  error: { type: ANTHROPIC_TYPES[status] ?? 'api_error', message },
});

/** The responses vendor: `{"error":{"message","type","param","code"}}`. */
const OPENAI_TYPES: Record<number, [type: string, code: string | null]> = {
  400: ['invalid_request_error', null],
  401: ['invalid_request_error', 'invalid_api_key'],
  402: ['insufficient_quota', 'insufficient_quota'],
  403: ['invalid_request_error', 'model_not_found'],
  404: ['invalid_request_error', 'not_found'],
  405: ['invalid_request_error', 'method_not_allowed'],
  413: ['invalid_request_error', 'request_too_large'],
  429: ['requests', 'rate_limit_exceeded'],
  502: ['server_error', 'upstream_unreachable'],
  504: ['server_error', 'upstream_timeout'],
  508: ['server_error', 'loop_detected'],
};
const openaiBody: ErrorBody = (status, message) => {
  const [type, code] = OPENAI_TYPES[status] ?? ['server_error', null];
  return { error: { message, type, param: null, code } };
};

/** The generate-content vendor (Google RPC status): `{"error":{"code","message","status"}}`. */
const GEMINI_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  402: 'RESOURCE_EXHAUSTED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'INVALID_ARGUMENT',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  502: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
  508: 'ABORTED',
};
const geminiBody: ErrorBody = (status, message) => ({
  error: { code: status, message, status: GEMINI_STATUS[status] ?? 'INTERNAL' },
});

function renderer(body: ErrorBody): VendorErrorRenderer {
  return (res, err, headers) => {
    const payload = JSON.stringify(body(err.status, err.message));
    res.writeHead(err.status, {
      ...headers,
      ...err.headers,
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(payload),
    });
    res.end(payload);
  };
}

interface VendorSpec {
  format: UsageFormat;
  keyHeader: string;
  keyHeaderValue: (key: string) => string;
  body: ErrorBody;
}

const SPECS: Record<VendorName, VendorSpec> = {
  anthropic: { format: 'messages', keyHeader: 'x-api-key', keyHeaderValue: (k) => k, body: anthropicBody },
  openai: {
    format: 'responses',
    keyHeader: 'authorization',
    keyHeaderValue: (k) => `Bearer ${k}`,
    body: openaiBody,
  },
  // Gemini's key goes in its header, never in the URL, where logs along the way would keep it.
  gemini: {
    format: 'generateContent',
    keyHeader: 'x-goog-api-key',
    keyHeaderValue: (k) => k,
    body: geminiBody,
  },
};

export function createVendors(gateway: Config['gateway']): Record<VendorName, Vendor> {
  const build = (name: VendorName): Vendor => {
    const spec = SPECS[name];
    const { baseUrl, apiKeys } = gateway[name];
    const origin = new URL(baseUrl);
    let turn = 0;
    return {
      name,
      format: spec.format,
      origin,
      basePath: origin.pathname.replace(/\/+$/, ''),
      defaultVersion: name === 'anthropic' ? gateway.anthropic.defaultVersion : undefined,
      keyHeader: spec.keyHeader,
      nextKey: () => (apiKeys.length ? apiKeys[turn++ % apiKeys.length] : undefined),
      keyHeaderValue: spec.keyHeaderValue,
      renderError: renderer(spec.body),
    };
  };
  return { anthropic: build('anthropic'), openai: build('openai'), gemini: build('gemini') };
}

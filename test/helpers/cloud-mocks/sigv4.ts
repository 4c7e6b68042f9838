import { createHash, timingSafeEqual } from 'node:crypto';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { CloudReceived } from './loopback';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Temporary credentials: the request must carry it as x-amz-security-token. */
  sessionToken?: string;
}

/** Why AWS refused a signature: the x-amzn-ErrorType name and the message it sends. */
export interface SigV4Failure {
  errorType:
    | 'MissingAuthenticationTokenException'
    | 'IncompleteSignatureException'
    | 'InvalidSignatureException'
    | 'UnrecognizedClientException';
  message: string;
}

export interface SigV4Expectation {
  service: string;
  region: string;
  credentials: readonly AwsCredentials[];
  /** How far x-amz-date may be from the mock's clock (AWS: 15 minutes for most services). */
  maxSkewMs: number;
}

type SignableRequest = Parameters<SignatureV4['sign']>[0];

const MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';
const BAD_TOKEN = 'The security token included in the request is invalid.';

/** `20260101T120000Z` as a Date (undefined when it is not one). */
function parseAmzDate(value: string | undefined): Date | undefined {
  const m = value?.match(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/);
  return m ? new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])) : undefined;
}

const amzDate = (date: Date) =>
  date
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');

/** The query as the signer takes it: decoded keys and values, repeated keys as arrays (no `+` for space: AWS's rule). */
function parseQuery(url: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  const at = url.indexOf('?');
  if (at < 0) return query;
  for (const pair of url.slice(at + 1).split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const key = decodeURIComponent(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? '' : decodeURIComponent(pair.slice(eq + 1));
    const prior = query[key];
    query[key] = prior === undefined ? value : [...(Array.isArray(prior) ? prior : [prior]), value];
  }
  return query;
}

/**
 * Checks a request's AWS Signature Version 4 the way AWS does: by recomputing it, here with AWS's own signer
 * (`SignatureV4` from @smithy/signature-v4, sha256 from @smithy/hash-node), over the request as it came on the wire:
 * the method, the path exactly as sent (the signer escapes it again, `uriEscapePath` on, as AWS SDKs sign for every
 * service but S3), the query, the headers the Authorization header lists in SignedHeaders (`:authority` included
 * when an HTTP/2 client signed it), x-amz-date as the signing date and the sha256 of the body received. A signed
 * x-amz-content-sha256 is checked against the body, not trusted. Returns the failure AWS would answer, or undefined.
 */
export async function verifySigV4(
  req: CloudReceived,
  expect: SigV4Expectation,
): Promise<SigV4Failure | undefined> {
  const authorization = req.headers.authorization ?? '';
  if (!authorization)
    return { errorType: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const parsed = authorization.match(
    /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request,\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]{64})$/,
  );
  if (!parsed) {
    return {
      errorType: 'IncompleteSignatureException',
      message: `Authorization header requires 'Credential' parameter. Authorization header requires 'Signature' parameter. Authorization header requires 'SignedHeaders' parameter. Authorization=${authorization.split(' ')[0]}`,
    };
  }
  const [, accessKeyId, scopeDate, scopeRegion, scopeService, signedHeaderList, signature] = parsed;
  const credentials = expect.credentials.find((c) => c.accessKeyId === accessKeyId);
  if (!credentials) return { errorType: 'UnrecognizedClientException', message: BAD_TOKEN };
  const token = req.headers['x-amz-security-token'];
  if ((credentials.sessionToken ?? undefined) !== (token ?? undefined)) {
    return { errorType: 'UnrecognizedClientException', message: BAD_TOKEN };
  }

  const dateHeader = req.headers['x-amz-date'] as string | undefined;
  const signingDate = parseAmzDate(dateHeader);
  if (!signingDate || !dateHeader) {
    return {
      errorType: 'IncompleteSignatureException',
      message: "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.",
    };
  }
  const now = Date.now();
  if (signingDate.getTime() < now - expect.maxSkewMs) {
    const limit = amzDate(new Date(now - expect.maxSkewMs));
    const minutes = expect.maxSkewMs / 60_000;
    return {
      errorType: 'InvalidSignatureException',
      message: `Signature expired: ${dateHeader} is now earlier than ${limit} (${amzDate(new Date(now))} - ${minutes} min.)`,
    };
  }
  if (signingDate.getTime() > now + expect.maxSkewMs) {
    const limit = amzDate(new Date(now + expect.maxSkewMs));
    const minutes = expect.maxSkewMs / 60_000;
    return {
      errorType: 'InvalidSignatureException',
      message: `Signature not yet current: ${dateHeader} is still later than ${limit} (${amzDate(new Date(now))} + ${minutes} min.)`,
    };
  }
  if (scopeDate !== dateHeader.slice(0, 8)) {
    return {
      errorType: 'InvalidSignatureException',
      message: `Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '${scopeDate}' != '${dateHeader.slice(0, 8)}', from '${dateHeader}'.`,
    };
  }
  if (scopeRegion !== expect.region) {
    return {
      errorType: 'InvalidSignatureException',
      message: `Credential should be scoped to a valid region. `,
    };
  }
  if (scopeService !== expect.service) {
    return {
      errorType: 'InvalidSignatureException',
      message: `Credential should be scoped to correct service: '${expect.service}'. `,
    };
  }
  const signedNames = signedHeaderList.split(';');
  if (!signedNames.includes('host') && !signedNames.includes(':authority')) {
    return {
      errorType: 'InvalidSignatureException',
      message: "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.",
    };
  }

  const headers: Record<string, string> = {};
  for (const name of signedNames) {
    const value = req.headers[name];
    if (value === undefined) continue;
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  // The signer would take a signed payload hash on trust; AWS compares it with the body, so the mock does too.
  if ('x-amz-content-sha256' in headers) {
    headers['x-amz-content-sha256'] = createHash('sha256').update(req.body).digest('hex');
  }
  const signer = new SignatureV4({
    service: expect.service,
    region: expect.region,
    // The session token was compared above; given here the signer would add it as a header of its own.
    credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey },
    sha256: Hash.bind(null, 'sha256'),
    applyChecksum: false,
  });
  const request: SignableRequest = {
    method: req.method,
    protocol: 'http:',
    hostname: '127.0.0.1',
    path: req.path,
    query: parseQuery(req.url),
    headers,
    body: req.body,
  };
  const signed = await signer.sign(request, { signingDate, signableHeaders: new Set(signedNames) });
  const recomputed = String(signed.headers.authorization).match(
    /SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/,
  );
  const same =
    recomputed !== null &&
    recomputed[1] === signedHeaderList &&
    timingSafeEqual(Buffer.from(recomputed[2]), Buffer.from(signature));
  return same ? undefined : { errorType: 'InvalidSignatureException', message: MISMATCH };
}

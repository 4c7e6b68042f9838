import http from 'node:http';
import { createHarness, fundedKey, type TestConfigOptions, type TestHarness } from './services';
import { MockVendor } from './mock-vendor';
import { deepMerge } from '../../src/config';
import { listen } from '../../src/http/server';

export const VENDOR_KEYS = {
  anthropic: ['sk-ant-vendor-1', 'sk-ant-vendor-2'],
  openai: ['sk-openai-vendor-1'],
  gemini: ['AIza-gemini-vendor-1'],
};

/** A loopback port nothing listens on (bound, read, released): an unreachable vendor, or a port to take next. */
export { freePort } from './ports';

export interface RunningGateway {
  h: TestHarness;
  base: string;
  /** The listening server (a test may watch its connections). */
  server: http.Server;
  close(): Promise<void>;
}

/** A listening Genway whose three vendors all point at `vendorUrl`, so the official SDKs can talk to it. */
export async function startGateway(
  vendorUrl: string,
  options: TestConfigOptions & { gateway?: Record<string, unknown>; port?: number } = {},
): Promise<RunningGateway> {
  const vendor = (name: keyof typeof VENDOR_KEYS) => ({ baseUrl: vendorUrl, apiKeys: VENDOR_KEYS[name] });
  const gateway = deepMerge(
    { anthropic: vendor('anthropic'), openai: vendor('openai'), gemini: vendor('gemini') },
    options.gateway ?? {},
  );
  const h = createHarness({
    ...options,
    workers: options.workers ?? false,
    overlay: deepMerge(options.overlay ?? {}, { gateway }),
  });
  // The server `genway serve` runs: its timeouts, connection cap and early close are part of what is tested.
  const { server, port } = await listen(
    h.app,
    { ...h.services.config.server, host: '127.0.0.1', port: options.port ?? 0 },
    h.services.logger,
  );
  h.services.signer.useBoundPort(port);
  return {
    h,
    base: `http://127.0.0.1:${port}`,
    server,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await h.close();
    },
  };
}

export interface GatewaySetup {
  vendor: MockVendor;
  gw: RunningGateway;
  key: string;
  keyId: string;
}

/**
 * The shared setup of a gateway test file: a recording mock vendor and a Genway pointed at it, started once for the
 * file, and a fresh funded key before each test. `use` receives them whenever they change (the key per test).
 */
export function useGateway(
  options: Parameters<typeof startGateway>[1],
  balanceUsd: number | undefined,
  use: (setup: GatewaySetup) => void,
): void {
  let vendor: MockVendor;
  let gw: RunningGateway;
  beforeAll(async () => {
    vendor = await new MockVendor().start();
    gw = await startGateway(vendor.url, options);
  });
  afterAll(async () => {
    await gw?.close();
    await vendor?.stop();
  });
  beforeEach(async () => {
    const { key, keyId } = await fundedKey(gw.h.services, balanceUsd);
    use({ vendor, gw, key, keyId });
  });
}

export interface RawResponse {
  status: number;
  statusMessage: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One HTTP exchange with exact bytes both ways (no decompression, no re-encoding). */
export function rawRequest(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: Buffer | string;
    /** The request target sent as is (a URL string would have its dot segments removed). */
    path?: string;
  } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const { method = 'POST', headers, path } = options;
    const req = http.request(url, { method, headers, ...(path ? { path } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          statusMessage: res.statusMessage!,
          headers: res.headers,
          body: Buffer.concat(chunks),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

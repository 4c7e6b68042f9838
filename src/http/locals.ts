import type { AuthContext } from '../accounts/service';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      requestId: string;
      /** Route template for metrics and logs, e.g. `/api/v1/statusTask/:model`. */
      route?: string;
      /** Set by the auth middleware. */
      auth?: AuthContext;
    }
  }
}

export {};

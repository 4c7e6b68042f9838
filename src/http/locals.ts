import type { AuthContext } from '../accounts/service';
import type { ErrorRenderer } from '../errors';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      requestId: string;
      /** Route template for metrics and logs, e.g. `/api/v1/statusTask/:model`. */
      route?: string;
      /** Set by the auth middleware. */
      auth?: AuthContext;
      /** Gateway routes answer errors in their vendor's shape instead of the envelope. */
      renderError?: ErrorRenderer;
    }
  }
}

export {};

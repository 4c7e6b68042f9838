import fs from 'node:fs';
import path from 'node:path';
import express, { type Router } from 'express';
import { CONSOLE_DIR } from '../paths';

/** Where `npm run build` puts the console (scripts/build-console.js): src/paths.ts. */
export { CONSOLE_DIR };

/**
 * The console's own pages run under this policy: scripts and styles from this origin only (no inline code, no
 * eval), API calls to this origin only, no framing. Result previews show media from where Genway serves result
 * files (its public URL, which need not be the origin the console was opened at: localhost and 127.0.0.1, say) or
 * from the upstream's HTTPS storage, so images and media also allow that origin, https: and blob: URLs.
 */
export function consoleCsp(filesOrigin?: string): string {
  const media = filesOrigin && !filesOrigin.startsWith('https:') ? ` ${filesOrigin}` : '';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self'${media} https: data: blob:`,
    `media-src 'self'${media} https: blob:`,
    "connect-src 'self'",
    "font-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/**
 * GET /console/...: the web console, a single page application. Hashed assets are cached for good; every other
 * path under /console answers the page itself (the console routes on the client), never cached, so a new build
 * is picked up at once. Read once at start: nothing touches the disk per request but the static assets.
 */
export function consoleRouter(
  dir: string = CONSOLE_DIR,
  filesOrigin: () => string | undefined = () => undefined,
): Router {
  const router = express.Router();
  const index = path.join(dir, 'index.html');
  const page = fs.existsSync(index) ? fs.readFileSync(index) : null;
  // The files' origin is known once the server has bound its port: the policy is built again only if it changed.
  let policy = { origin: filesOrigin(), csp: consoleCsp(filesOrigin()) };
  router.use('/console', (_req, res, next) => {
    const origin = filesOrigin();
    if (origin !== policy.origin) policy = { origin, csp: consoleCsp(origin) };
    res.set(SECURITY_HEADERS).set('Content-Security-Policy', policy.csp);
    res.locals.route = '/console';
    next();
  });
  router.use(
    '/console/assets',
    express.static(path.join(dir, 'assets'), {
      immutable: true,
      maxAge: '365d',
      index: false,
      dotfiles: 'ignore',
    }),
    (_req: express.Request, res: express.Response) =>
      void res.status(404).type('text/plain').send('Not found\n'),
  );
  router.get(['/console', '/console/{*rest}'], (req, res) => {
    if (req.path === '/console') return res.redirect(301, '/console/');
    if (!page) {
      res.status(503).type('text/plain').send('The console is not built: run `npm run build`.\n');
      return;
    }
    res.set('Cache-Control', 'no-cache').type('html').send(page);
  });
  return router;
}

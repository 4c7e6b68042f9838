import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Link } from './components';
import { match, navigate, useLocation } from './router';
import { accountInView, actAs, onSessionChange, session, setSession, type Session } from './session';
import { SignIn } from './pages/signin';
import { Overview } from './pages/overview';
import { Keys } from './pages/keys';
import { Tasks, TaskDetail } from './pages/tasks';
import { Batches, BatchDetail } from './pages/batches';
import { Webhooks } from './pages/webhooks';
import { Models, ModelDetail } from './pages/models';
import { Admin, AdminAccount } from './pages/admin';
import { Audit, LogDetail, Logs } from './pages/logs';
import type { FunctionComponent } from 'preact';

type Params = Record<string, string>;

interface Route {
  pattern: string;
  page: FunctionComponent<{ params: Params }>;
  /** Needs an account in view (an admin picks one first). */
  account?: boolean;
  admin?: boolean;
}

/** Every page of the console, in one table. */
const ROUTES: Route[] = [
  { pattern: '/', page: Overview },
  { pattern: '/keys', page: Keys, account: true },
  { pattern: '/tasks', page: Tasks, account: true },
  { pattern: '/tasks/:taskId', page: TaskDetail, account: true },
  { pattern: '/batches', page: Batches, account: true },
  { pattern: '/batches/:batchId', page: BatchDetail, account: true },
  { pattern: '/webhooks', page: Webhooks, account: true },
  { pattern: '/models', page: Models, account: true },
  { pattern: '/models/:modelId', page: ModelDetail, account: true },
  { pattern: '/logs', page: Logs, account: true },
  { pattern: '/logs/:logId', page: LogDetail, account: true },
  { pattern: '/audit', page: Audit, admin: true },
  { pattern: '/admin', page: Admin, admin: true },
  { pattern: '/admin/accounts/:accountId', page: AdminAccount, admin: true },
];

const NAV: { to: string; label: string; admin?: boolean }[] = [
  { to: '/', label: 'Overview' },
  { to: '/keys', label: 'Keys' },
  { to: '/tasks', label: 'Tasks' },
  { to: '/batches', label: 'Batches' },
  { to: '/webhooks', label: 'Webhooks' },
  { to: '/models', label: 'Models' },
  { to: '/logs', label: 'Logs' },
  { to: '/admin', label: 'Admin', admin: true },
  { to: '/audit', label: 'Audit', admin: true },
];

function useSession(): Session | null {
  const [s, set] = useState(session());
  useEffect(() => onSessionChange(() => set(session())), []);
  return s;
}

function isCurrent(to: string, path: string): boolean {
  return to === '/' ? path === '/' : path === to || path.startsWith(`${to}/`);
}

function Shell({ s, path, children }: { s: Session; path: string; children: preact.ComponentChildren }) {
  const account = accountInView(s);
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <Link to="/" class="brand" aria-label="Genway console, overview">
          <img src="/console/assets/favicon.svg" alt="" width={24} height={24} />
          <span>Genway</span>
        </Link>
        <div class="who">
          {s.kind === 'admin' ? (
            <span class="who-label">
              Admin{account ? ` · ${account}` : ''}
              {account ? (
                <button type="button" class="link-button" onClick={() => actAs(null)}>
                  all accounts
                </button>
              ) : null}
            </span>
          ) : (
            <span class="who-label">{s.accountName || s.accountId}</span>
          )}
          <button
            type="button"
            class="button secondary small"
            onClick={() => {
              setSession(null);
              navigate('/signin', true);
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <nav class="nav" aria-label="Console">
        <ul>
          {NAV.filter((item) => !item.admin || s.kind === 'admin').map((item) => (
            <li key={item.to}>
              <Link to={item.to} aria-current={isCurrent(item.to, path) ? 'page' : undefined}>
                {item.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

function PickAccount() {
  return (
    <div class="page-header-block">
      <h1>Choose an account</h1>
      <p>
        This page shows one account. Pick one on the <Link to="/admin">Admin</Link> page.
      </p>
    </div>
  );
}

function NotFound() {
  return (
    <div>
      <h1>Not found</h1>
      <p>
        Nothing here. Back to the <Link to="/">overview</Link>.
      </p>
    </div>
  );
}

function App() {
  const s = useSession();
  const { path } = useLocation();
  useEffect(() => {
    if (!s && path !== '/signin') navigate('/signin', true);
    if (s && path === '/signin') navigate('/', true);
  }, [s, path]);
  if (!s || path === '/signin') return <SignIn />;
  for (const route of ROUTES) {
    const params = match(route.pattern, path);
    if (!params) continue;
    const Page = route.page;
    let body = <Page params={params} />;
    if (route.admin && s.kind !== 'admin') body = <NotFound />;
    else if (route.account && !accountInView(s)) body = <PickAccount />;
    return (
      <Shell s={s} path={path}>
        {body}
      </Shell>
    );
  }
  return (
    <Shell s={s} path={path}>
      <NotFound />
    </Shell>
  );
}

render(<App />, document.getElementById('app')!);

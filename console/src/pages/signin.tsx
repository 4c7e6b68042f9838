import { useState } from 'preact/hooks';
import { api, ApiFailure } from '../api';
import { ErrorNotice, Field } from '../components';
import { navigate } from '../router';
import { setSession, type Session } from '../session';

export interface AccountSelf {
  accountId: string;
  name: string;
  keyId: string;
  balanceUsd: number;
}

/** Who a secret is: an API key (gwk_...) names its account; anything else is tried as the admin token. */
async function identify(secret: string): Promise<Session> {
  const headers = { authorization: `Bearer ${secret}` };
  if (secret.startsWith('gwk_')) {
    const self = await api<AccountSelf>('/api/v1/account', { headers });
    return { kind: 'key', secret, accountId: self.accountId, accountName: self.name, keyId: self.keyId };
  }
  try {
    await api('/admin/v1/accounts', { headers });
  } catch (err) {
    if (err instanceof ApiFailure && (err.status === 401 || err.status === 404))
      throw new Error('Not a valid API key (gwk_…) or admin token.');
    throw err;
  }
  return { kind: 'admin', secret, actingAccount: null };
}

export function SignIn() {
  const [secret, setSecret] = useState('');
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<Error | undefined>();
  return (
    <main id="main" class="signin">
      <div class="signin-card">
        <h1>Sign in to Genway</h1>
        <p class="muted">
          With an API key you see your account. With the admin token you see every account. The secret stays
          in this tab only and is sent in a header, never in a URL.
        </p>
        <form
          onSubmit={async (event) => {
            event.preventDefault();
            setPending(true);
            setError(undefined);
            try {
              setSession(await identify(secret.trim()));
              navigate('/', true);
            } catch (err) {
              setError(err as Error);
            } finally {
              setPending(false);
            }
          }}
        >
          <Field id="secret" label="API key or admin token" hint="An API key starts with gwk_.">
            <input
              id="secret"
              name="secret"
              type="password"
              autocomplete="off"
              spellcheck={false}
              required
              aria-describedby="secret-hint"
              value={secret}
              onInput={(event) => setSecret(event.currentTarget.value)}
            />
          </Field>
          <ErrorNotice error={error} />
          <button type="submit" class="button" disabled={pending || !secret.trim()}>
            {pending ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
      </div>
    </main>
  );
}

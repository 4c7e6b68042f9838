import { useState } from 'preact/hooks';
import { api, ApiFailure } from '../api';
import { ActionForm, InputField } from '../components';
import { useSubmit } from '../hooks';
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
  const signIn = useSubmit(async () => {
    setSession(await identify(secret.trim()));
    navigate('/', true);
  });
  return (
    <main id="main" class="signin">
      <div class="signin-card">
        <h1>Sign in to Genway</h1>
        <p class="muted">
          With an API key you see your account. With the admin token you see every account. The secret stays
          in this tab only and is sent in a header, never in a URL.
        </p>
        <ActionForm submit={signIn} label="Sign in" busy="Signing in…" disabled={!secret.trim()}>
          <InputField
            id="secret"
            label="API key or admin token"
            hint="An API key starts with gwk_."
            name="secret"
            type="password"
            autocomplete="off"
            spellcheck={false}
            required
            value={secret}
            onValue={setSecret}
          />
        </ActionForm>
      </div>
    </main>
  );
}

import { useEffect, useState, type FormEvent } from 'react';
import { api, data } from '../api/client';
import { forgetKey, storeKey } from '../api/session';
import { ssoConfig, type SsoConfig } from '../api/sso';
import { ErrorMessage, Notice } from '../components/ui';

/**
 * Single sign-on when the server offers it (the identity provider's page, then back here signed
 * in), or paste an API key, checked against the API before the console opens.
 */
export function SignIn({ message, onSignedIn }: { message?: string; onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [sso, setSso] = useState<SsoConfig>();

  useEffect(() => {
    ssoConfig().then(setSso, () => setSso({ enabled: false, login_url: null }));
  }, []);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    storeKey(key.trim());
    try {
      await data(api.GET('/agent/models'));
      onSignedIn();
    } catch (failure) {
      forgetKey();
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="sign-in" id="main">
      <h1>Ambient Console</h1>
      {message && <Notice>{message}</Notice>}
      {sso?.enabled && sso.login_url && (
        <p className="sso">
          <a
            className="button"
            href={`${sso.login_url}?return_to=${encodeURIComponent(window.location.pathname)}`}
          >
            Sign in with SSO
          </a>
        </p>
      )}
      <form onSubmit={submit}>
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          required
          value={key}
          onChange={(event) => setKey(event.target.value)}
        />
        <p className="hint">Kept in this tab's session storage only, sent as a bearer token.</p>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <ErrorMessage error={error} />
    </main>
  );
}

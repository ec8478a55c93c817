import { useEffect, useState, type FormEvent } from 'react';
import { API_BASE } from '../api/client';
import { storeKey } from '../api/session';
import { ssoConfig, type SsoConfig } from '../api/sso';
import { Notice } from '../components/ui';
import { Link } from '../router';

/**
 * Whether the server accepts `key`: asked directly rather than through the API client, whose
 * 401 handler would sign the console out again and add its own message to this page's.
 */
async function keyRefusal(key: string): Promise<string | null> {
  let status: number;
  try {
    status = (await fetch(`${API_BASE}/me`, { headers: { Authorization: `Bearer ${key}` } }))
      .status;
  } catch {
    return 'The server could not be reached: check your connection, then try again.';
  }
  if (status === 401 || status === 403) {
    return 'This API key was not accepted. Check that you pasted all of it; it may also have been revoked or have expired.';
  }
  return status < 300
    ? null
    : `The server could not check the key (it answered ${status}): try again.`;
}

/**
 * Single sign-on when the server offers it (the identity provider's page, then back here signed
 * in), or paste an API key, checked against the API before the console opens.
 */
export function SignIn({ message, onSignedIn }: { message?: string; onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [sso, setSso] = useState<SsoConfig>();

  useEffect(() => {
    ssoConfig().then(setSso, () => setSso({ enabled: false, login_url: null }));
  }, []);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const refusal = await keyRefusal(key.trim());
    setBusy(false);
    if (refusal) return setError(refusal);
    storeKey(key.trim());
    onSignedIn();
  }

  return (
    <main className="sign-in" id="main">
      <h1>Ambient Console</h1>
      {/* One message at a time: this attempt's, else why the console came back here. */}
      {error ? (
        <p className="error" role="alert" data-testid="sign-in-message">
          {error}
        </p>
      ) : (
        message && <Notice>{message}</Notice>
      )}
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
          onChange={(event) => {
            setKey(event.target.value);
            setError(null);
          }}
          aria-describedby="api-key-hint api-key-source"
        />
        <p className="hint" id="api-key-hint">
          Kept in this tab&apos;s session storage only, sent as a bearer token.
        </p>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <p className="hint key-source" id="api-key-source">
        <strong>No key yet?</strong> Ambient prints the first admin key once, on its first start.
        After that a team admin creates keys on the <Link to="/api-keys">API keys</Link> page (sign
        in there as an admin), or at the command line with{' '}
        <code>npm run cli -- api-keys create --team &lt;team&gt; --role member</code>.
      </p>
    </main>
  );
}

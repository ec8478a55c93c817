import { useState, type FormEvent } from 'react';
import { api, data } from '../api/client';
import { forgetKey, storeKey } from '../api/session';
import { ErrorMessage, Notice } from '../components/ui';

/** Paste an API key; it is checked against the API before the console opens. */
export function SignIn({ message, onSignedIn }: { message?: string; onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

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

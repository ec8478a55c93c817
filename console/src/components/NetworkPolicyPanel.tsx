import { useState } from 'react';
import { api, data } from '../api/client';
import { ErrorMessage, useLoad } from './ui';

/** The team's network policy: whether environments may use open egress; admins change it. */
export function NetworkPolicyPanel() {
  const me = useLoad(() => data(api.GET('/me')), []);
  const policy = useLoad(() => data(api.GET('/network-policy')), []);
  const [error, setError] = useState<unknown>();
  const isAdmin = me.value?.role === 'admin';
  if (!policy.value) return <ErrorMessage error={policy.error} />;
  const open = policy.value.egress_open_allowed;

  async function set(egressOpenAllowed: boolean) {
    setError(undefined);
    try {
      policy.setValue(
        await data(
          api.PUT('/network-policy', { body: { egress_open_allowed: egressOpenAllowed } }),
        ),
      );
    } catch (failure) {
      setError(failure);
    }
  }

  return (
    <section aria-label="Network policy" className="panel">
      <h2>Network policy</h2>
      <p data-testid="network-policy">
        {open
          ? 'Environments may use open egress (any outside host).'
          : 'An admin forbade open egress: environments use Allowlist or None.'}
      </p>
      {isAdmin ? (
        <button type="button" onClick={() => void set(!open)}>
          {open ? 'Forbid open egress' : 'Allow open egress'}
        </button>
      ) : (
        <p className="hint">Admins can change the network policy.</p>
      )}
      <ErrorMessage error={error} />
    </section>
  );
}

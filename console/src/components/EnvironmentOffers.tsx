import { useState } from 'react';
import { api, data, type Schemas } from '../api/client';
import { ErrorMessage, useLoad } from './ui';

type Offer = Schemas['PendingEnvironment'];
type Config = Schemas['EnvironmentConfig'];

/** What a run in the environment would clone, run and be given: what an admin reviews. */
function Review({ config }: { config: Config }) {
  const repos = config.github_repos.map((r) => `${r.owner}/${r.repo}`).join(', ');
  return (
    <dl className="facts">
      <dt>Repositories</dt>
      <dd>{repos || '—'}</dd>
      <dt>Setup commands</dt>
      <dd>
        {config.setup_commands.length ? <pre>{config.setup_commands.join('\n')}</pre> : 'none'}
      </dd>
      <dt>Image</dt>
      <dd>
        <code>{config.docker_image ?? 'default'}</code>
      </dd>
      <dt>Network</dt>
      <dd>{config.network ?? 'default'}</dd>
    </dl>
  );
}

/**
 * Environments other teams offer this team, for its admins: each counts only once accepted, and
 * an owner's change waits here until accepted again (the team keeps using the accepted version).
 */
export function EnvironmentOffers({ onChanged }: { onChanged: () => void }) {
  const me = useLoad(() => data(api.GET('/me')), []);
  const isAdmin = me.value?.role === 'admin';
  const offers = useLoad(
    () => (isAdmin ? data(api.GET('/agent/environments/pending')) : Promise.resolve(null)),
    [isAdmin],
  );
  const [error, setError] = useState<unknown>();

  async function act(offer: Offer, accept: boolean) {
    setError(undefined);
    const path = { params: { path: { uid: offer.uid } } };
    try {
      if (accept) {
        await data(
          api.POST('/agent/environments/{uid}/accept', {
            ...path,
            body: { version: offer.version },
          }),
        );
      } else {
        await data(api.POST('/agent/environments/{uid}/decline', path));
      }
      offers.reload();
      onChanged();
    } catch (failure) {
      setError(failure);
      offers.reload();
    }
  }

  const list = offers.value?.environments ?? [];
  if (!isAdmin || list.length === 0) return <ErrorMessage error={offers.error ?? error} />;
  return (
    <section className="panel" aria-label="Offered to this team">
      <h2>Offered to this team</h2>
      <p className="hint">
        Another team shares these environments. Runs of this team use one only once you accept it,
        and always the version you accepted.
      </p>
      {list.map((offer) => (
        <article key={offer.uid} className="stack">
          <h3>
            {offer.config.name} <small>version {offer.version}</small>
          </h3>
          <p className="hint">
            From team <code>{offer.scope.uid}</code>
            {offer.accepted_version !== null &&
              ` · this team uses version ${offer.accepted_version} until you accept this one`}
          </p>
          <Review config={offer.config} />
          <div className="actions">
            <button
              type="button"
              className="primary"
              aria-label={`Accept ${offer.config.name}`}
              onClick={() => void act(offer, true)}
            >
              Accept version {offer.version}
            </button>
            <button
              type="button"
              aria-label={`Decline ${offer.config.name}`}
              onClick={() => void act(offer, false)}
            >
              Decline
            </button>
          </div>
        </article>
      ))}
      <ErrorMessage error={error} />
    </section>
  );
}

import { api, data } from '../api/client';
import { useLoad } from './ui';

/** The signed-in person (or key) and team, in the header. */
export function WhoAmI() {
  const { value: me } = useLoad(() => data(api.GET('/me')), []);
  if (!me) return null;
  return (
    <p className="who" data-testid="signed-in-as">
      <span>{me.display_name}</span> · <span>{me.team_name}</span> (<span>{me.role}</span>)
    </p>
  );
}

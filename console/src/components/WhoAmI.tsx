import { useCaller } from './access';

/** The signed-in person (or key) and team, in the header. */
export function WhoAmI() {
  const me = useCaller();
  if (!me) return null;
  return (
    <p className="who" data-testid="signed-in-as">
      <span>{me.display_name}</span> · <span>{me.team_name}</span> (<span>{me.role}</span>)
    </p>
  );
}

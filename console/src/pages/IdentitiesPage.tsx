export function IdentitiesPage() {
  return (
    <section>
      <h1>Identities</h1>
    </section>
  );
}

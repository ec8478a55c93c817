export function ModelsPage() {
  return (
    <section>
      <h1>Models</h1>
    </section>
  );
}

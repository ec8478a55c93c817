export function WebhooksPage() {
  return (
    <section>
      <h1>Webhooks</h1>
    </section>
  );
}

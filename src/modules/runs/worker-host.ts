/** The reserved `worker_host` meaning Ambient's own workers (Oz: "Warp-hosted"). */
export const SERVICE_HOSTED_WORKER_HOST = 'warp';

const PRINTABLE_ASCII = /^[\x21-\x7e]{1,128}$/;

/**
 * Why `id` cannot name a self-hosted worker, or null when it can: 1–128 printable ASCII
 * characters, matched exactly (case-sensitive), and not starting with the reserved `warp`.
 */
export function workerIdProblem(id: string): string | null {
  if (!PRINTABLE_ASCII.test(id))
    return 'must be 1 to 128 printable ASCII characters without spaces';
  if (id.toLowerCase().startsWith(SERVICE_HOSTED_WORKER_HOST)) {
    return `ids starting with "${SERVICE_HOSTED_WORKER_HOST}" are reserved for service-hosted workers`;
  }
  return null;
}

/**
 * The self-hosted worker a run's `config.worker_host` routes it to; null (omitted or `warp`)
 * means Ambient's own workers. Returns the problem instead when no worker could ever claim it.
 */
export function routeWorkerHost(
  workerHost: string | undefined | null,
): { host: string | null } | { problem: string } {
  if (
    workerHost === undefined ||
    workerHost === null ||
    workerHost === SERVICE_HOSTED_WORKER_HOST
  ) {
    return { host: null };
  }
  const problem = workerIdProblem(workerHost);
  return problem ? { problem } : { host: workerHost };
}

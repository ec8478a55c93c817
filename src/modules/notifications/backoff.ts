/** The retry policy of notification deliveries (config `notifications`). */
export interface BackoffPolicy {
  backoffBaseMs: number;
  backoffCapMs: number;
  maxAttempts: number;
}

/**
 * The delay before the attempt after `attempts` failed ones: base·2^(attempts-1), never above
 * the cap; null once `maxAttempts` were made (the delivery is failed).
 */
export function retryDelayMs(policy: BackoffPolicy, attempts: number): number | null {
  if (attempts >= policy.maxAttempts) return null;
  const exponent = Math.max(0, attempts - 1);
  return Math.min(policy.backoffCapMs, policy.backoffBaseMs * 2 ** exponent);
}

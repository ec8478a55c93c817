/** The Oz PlatformErrorCode values with the HTTP status and retryability the Oz docs give each. */
export const ERROR_CODES = {
  insufficient_credits: { status: 403, retryable: false, title: 'Insufficient credits' },
  feature_not_available: { status: 403, retryable: false, title: 'Feature not available' },
  external_authentication_required: {
    status: 401,
    retryable: false,
    title: 'External authentication required',
  },
  not_authorized: { status: 403, retryable: false, title: 'Not authorized' },
  invalid_request: { status: 400, retryable: false, title: 'Invalid request' },
  resource_not_found: { status: 404, retryable: false, title: 'Resource not found' },
  budget_exceeded: { status: 403, retryable: false, title: 'Budget exceeded' },
  integration_disabled: { status: 403, retryable: false, title: 'Integration disabled' },
  integration_not_configured: {
    status: 400,
    retryable: false,
    title: 'Integration not configured',
  },
  operation_not_supported: { status: 422, retryable: false, title: 'Operation not supported' },
  environment_setup_failed: { status: 500, retryable: false, title: 'Environment setup failed' },
  content_policy_violation: { status: 403, retryable: false, title: 'Content policy violation' },
  conflict: { status: 409, retryable: true, title: 'Conflict' },
  /** Ambient's own: a credential shown once is not shown again (an idempotent replay of it). */
  already_shown: { status: 409, retryable: false, title: 'Already shown' },
  /**
   * Ambient's own, a run's error only: the run waited BLOCKED for a decision longer than
   * AMBIENT_BLOCKED_TIMEOUT and failed.
   */
  approval_timeout: { status: 408, retryable: false, title: 'Approval timed out' },
  authentication_required: { status: 401, retryable: false, title: 'Authentication required' },
  resource_unavailable: { status: 503, retryable: true, title: 'Resource unavailable' },
  internal_error: { status: 500, retryable: true, title: 'Internal error' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Run states that an error code leaves a run in: user-caused → FAILED, service-side → ERROR. */
export function terminalStateFor(code: ErrorCode): 'FAILED' | 'ERROR' {
  return code === 'authentication_required' ||
    code === 'resource_unavailable' ||
    code === 'internal_error'
    ? 'ERROR'
    : 'FAILED';
}

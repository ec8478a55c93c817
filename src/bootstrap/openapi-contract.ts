import type { OpenAPIObject } from '@nestjs/swagger';
import type {
  OperationObject,
  PathItemObject,
  ResponsesObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { TEAM_ROLES } from '../common/auth/roles';
import { OZ_UNION_SCHEMAS } from './oz-union-schemas';

/**
 * Operations Ambient adds to the Oz API (paths as the document spells them): everything that is in
 * neither the official OpenAPI nor the Oz SDKs / docs (`api-reference.md`). Marked
 * `x-ambient-extension: true` so generated clients can tell them apart.
 */
const AMBIENT_EXTENSION_PATHS: readonly RegExp[] = [
  /^\/harness-support\//,
  /^\/health(\/live|\/ready)?$/,
  /^\/secrets(\/|$)/,
  /^\/blobs\//,
  /^\/audit-events$/,
  /^\/usage$/,
  /^\/agent\/runs\/\{runId\}\/(judges|scores|stream)$/,
  /^\/agent\/runs\/\{runId\}\/approvals/,
  /^\/agent\/approvals$/,
  /^\/agent\/identities\/\{uid\}\/api-keys/,
  /^\/agent\/environments\/(shared|pending|\{uid\})/,
  /^\/factory\/\{uid\}\/(definition|automations|sync)$/,
  /^\/factory\/\{factoryUid\}\/webhooks/,
  /^\/api-keys(\/|$)/,
  /^\/scim-tokens(\/|$)/,
  /^\/worker-credentials(\/|$)/,
  /^\/limits$/,
  /^\/agent\/identities\/\{uid\}\/limits$/,
];

/** Schemas that exist only in Ambient (their uses are marked field by field as well). */
const AMBIENT_EXTENSION_SCHEMAS: readonly string[] = [
  'SandboxResources',
  'SandboxInfo',
  'HealthCheckResult',
  'HealthIndicator',
  'MCPSecretReference',
  'CreateApiKeyRequest',
  'CreateScimTokenRequest',
  'ScimToken',
  'CreatedScimToken',
  'ListScimTokensResponse',
  'ApiKey',
  'CreatedApiKey',
  'ListApiKeysResponse',
  'CreateWorkerCredentialRequest',
  'WorkerCredential',
  'CreatedWorkerCredential',
  'ListWorkerCredentialsResponse',
  'UsageBucket',
  'UsageResponse',
  'Limits',
  'UpdateLimitsRequest',
  'AcceptEnvironmentRequest',
  'PendingEnvironment',
  'ListPendingEnvironmentsResponse',
  'ApprovalRule',
  'ApprovalDecider',
  'RunApproval',
  'ListRunApprovalsResponse',
  'ApprovalInboxItem',
  'ListApprovalInboxResponse',
  'DecideApprovalRequest',
  'DecideApprovalResponse',
];

const ERROR_RESPONSE = {
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Error' } } },
};

/**
 * What the DTO decorators cannot say, applied to the generated document: the Oz discriminated
 * unions, the extension marks, and an `Error` answer on every operation (a 401 on authenticated
 * ones, `default` for the rest), so every error a client can receive is typed.
 */
export function completeOpenApiDocument(document: OpenAPIObject): OpenAPIObject {
  document.components ??= {};
  document.components.schemas = { ...document.components.schemas, ...OZ_UNION_SCHEMAS };
  for (const name of AMBIENT_EXTENSION_SCHEMAS) {
    const schema = document.components.schemas[name];
    if (schema) Object.assign(schema, { 'x-ambient-extension': true });
  }
  for (const [path, item] of Object.entries(document.paths) as [string, PathItemObject][]) {
    const extension = AMBIENT_EXTENSION_PATHS.some((pattern) => pattern.test(path));
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const operation: OperationObject | undefined = item[method];
      if (!operation) continue;
      if (extension) Object.assign(operation, { 'x-ambient-extension': true });
      const responses: ResponsesObject = operation.responses;
      if (operation.security?.length && !responses['401']) {
        responses['401'] = { description: 'Authentication required', ...ERROR_RESPONSE };
      }
      const roles = (operation as { 'x-ambient-roles'?: string[] })['x-ambient-roles'];
      if (roles && roles.length < TEAM_ROLES.length && !responses['403']) {
        responses['403'] = { description: 'Not authorized (role or key)', ...ERROR_RESPONSE };
      }
      responses.default ??= {
        description: 'Any other error, in the Oz Error model',
        ...ERROR_RESPONSE,
      };
    }
  }
  return document;
}

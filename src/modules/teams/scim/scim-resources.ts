import type { User } from '../user.entity';

export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';
export const SCIM_USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const SCIM_LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
/** Pages of GET /Users are at most this long (and this long without `count`). */
export const SCIM_MAX_PAGE = 100;

/** A SCIM error (RFC 7644 §3.12): the status, a `scimType` for 400s, and what was wrong. */
export class ScimError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly scimType?: 'invalidFilter' | 'invalidSyntax' | 'invalidValue' | 'mutability',
  ) {
    super(detail);
  }

  get body() {
    return {
      schemas: [SCIM_ERROR_SCHEMA],
      status: String(this.status),
      ...(this.scimType ? { scimType: this.scimType } : {}),
      detail: this.detail,
    };
  }
}

/** RFC 7643 §5: PATCH and `userName eq` filters; no bulk, sort, ETags or passwords. */
export function serviceProviderConfig(baseUrl: string) {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: SCIM_MAX_PAGE },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'Bearer token',
        description: 'A SCIM token an admin makes with POST /api/v1/scim-tokens',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${baseUrl}/ServiceProviderConfig` },
  };
}

/** A person as a SCIM User: `userName` is their email; `active` false once deactivated. */
export function toScimUser(user: User & { deletedAt?: Date | null }, baseUrl: string) {
  return {
    schemas: [SCIM_USER_SCHEMA],
    id: user.id,
    userName: user.email ?? user.id,
    displayName: user.displayName,
    name: { formatted: user.displayName },
    emails: user.email ? [{ value: user.email, primary: true, type: 'work' }] : [],
    active: !user.deletedAt,
    meta: {
      resourceType: 'User',
      created: user.createdAt.toISOString(),
      location: `${baseUrl}/Users/${user.id}`,
    },
  };
}

/**
 * The userName a `filter` asks for: only `userName eq "…"` (what Okta and Entra send to find a
 * person) is understood; anything else is a 400 `invalidFilter`.
 */
export function userNameOfFilter(filter: unknown): string | undefined {
  if (filter === undefined) return undefined;
  const match =
    typeof filter === 'string' ? /^\s*userName\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i.exec(filter) : null;
  if (!match) {
    throw new ScimError(400, 'filter: only `userName eq "<email>"` is supported', 'invalidFilter');
  }
  try {
    return (JSON.parse(`"${match[1]}"`) as string).trim().toLowerCase();
  } catch {
    throw new ScimError(400, 'filter: the userName is not a valid string', 'invalidFilter');
  }
}

/** `startIndex` (1-based) and `count` of a list request, bounded as RFC 7644 §3.4.2.4 says. */
export function pageOf(startIndex: unknown, count: unknown): { start: number; count: number } {
  const number = (value: unknown, field: string, fallback: number) => {
    if (value === undefined) return fallback;
    const n = typeof value === 'string' && /^-?\d{1,9}$/.test(value) ? Number(value) : NaN;
    if (Number.isNaN(n)) throw new ScimError(400, `${field}: must be an integer`, 'invalidValue');
    return n;
  };
  return {
    start: Math.max(1, number(startIndex, 'startIndex', 1)),
    count: Math.min(SCIM_MAX_PAGE, Math.max(0, number(count, 'count', SCIM_MAX_PAGE))),
  };
}

/** `true`/`false`, or the strings Entra sends ("True", "False"). */
function activeValue(value: unknown, field: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) {
    return value.toLowerCase() === 'true';
  }
  throw new ScimError(400, `${field}: must be true or false`, 'invalidValue');
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The `active` attribute of an object, whatever the case of its name (undefined when absent). */
function activeIn(value: Record<string, unknown>, field: string): boolean | undefined {
  const name = Object.keys(value).find((k) => k.toLowerCase() === 'active');
  return name === undefined ? undefined : activeValue(value[name], `${field}.${name}`);
}

const MAX_OPERATIONS = 50;

/**
 * What a PATCH (RFC 7644 §3.5.2) asks of `active`: undefined when it does not touch it. Ambient
 * keeps nothing else a provider could change here (names and emails come from each sign-in), so
 * other attributes are accepted and left alone; an operation that is not one is a 400.
 */
export function activeOfPatch(body: unknown): boolean | undefined {
  const operations = isObject(body) ? body.Operations : undefined;
  if (!Array.isArray(operations) || operations.length === 0) {
    throw new ScimError(400, 'Operations: must be a non-empty list of operations', 'invalidSyntax');
  }
  if (operations.length > MAX_OPERATIONS) {
    throw new ScimError(400, `Operations: at most ${MAX_OPERATIONS}`, 'invalidSyntax');
  }
  let active: boolean | undefined;
  operations.forEach((operation: unknown, i) => {
    const field = `Operations[${i}]`;
    if (!isObject(operation) || typeof operation.op !== 'string') {
      throw new ScimError(
        400,
        `${field}.op: must be "add", "replace" or "remove"`,
        'invalidSyntax',
      );
    }
    const op = operation.op.toLowerCase();
    if (!['add', 'replace', 'remove'].includes(op)) {
      throw new ScimError(
        400,
        `${field}.op: must be "add", "replace" or "remove"`,
        'invalidSyntax',
      );
    }
    const path = operation.path;
    if (path !== undefined && typeof path !== 'string') {
      throw new ScimError(400, `${field}.path: must be a string`, 'invalidSyntax');
    }
    if (path !== undefined && path.trim().toLowerCase() === 'active') {
      if (op === 'remove') {
        throw new ScimError(400, `${field}: "active" cannot be removed`, 'mutability');
      }
      active = activeValue(operation.value, `${field}.value`);
    } else if (path === undefined && op !== 'remove') {
      if (!isObject(operation.value)) {
        throw new ScimError(
          400,
          `${field}.value: must be an object without a path`,
          'invalidSyntax',
        );
      }
      active = activeIn(operation.value, `${field}.value`) ?? active;
    }
  });
  return active;
}

/** What a PUT (a full User) says of `active`: undefined when it leaves it out. */
export function activeOfPut(body: unknown): boolean | undefined {
  if (!isObject(body)) throw new ScimError(400, 'the body must be a SCIM User', 'invalidSyntax');
  return activeIn(body, 'User');
}

import { ApiError } from '../../common/errors/api-error';
import {
  filterText,
  optionalEnum,
  pageLimit,
  RawQuery,
  singleValue,
  timestampParam,
} from '../../common/query-params';
import { AUDIT_OUTCOMES, AuditOutcome } from './audit-vocabulary';

export const DEFAULT_AUDIT_PAGE = 100;
export const MAX_AUDIT_PAGE = 200;

/** `<resource>.<verb>`, or `<resource>.*` for every verb of a resource. */
const ACTION = /^[a-z][a-z0-9_]*\.([a-z][a-z0-9_]*|\*)$/;

export interface AuditEventFilters {
  action?: string;
  actorId?: string;
  targetType?: string;
  targetId?: string;
  outcome?: AuditOutcome;
  since?: Date;
  until?: Date;
}

export interface AuditEventListParams {
  limit: number;
  cursor?: string;
  filters: AuditEventFilters;
}

/** Validates the query of GET /audit-events; a bad value is refused with the parameter named. */
export function parseAuditEventListParams(raw: RawQuery): AuditEventListParams {
  const action = filterText(raw, 'action');
  if (action !== undefined && !ACTION.test(action)) {
    throw ApiError.invalid('action', 'must look like "<resource>.<verb>" or "<resource>.*"');
  }
  const filters: AuditEventFilters = {
    action,
    actorId: filterText(raw, 'actor_id'),
    targetType: filterText(raw, 'target_type'),
    targetId: filterText(raw, 'target_id'),
    outcome: optionalEnum(raw, 'outcome', AUDIT_OUTCOMES),
    since: timestampParam(raw, 'since', 'floor'),
    until: timestampParam(raw, 'until', 'ceil'),
  };
  if (filters.since && filters.until && filters.since >= filters.until) {
    throw ApiError.invalid('until', 'must be later than since');
  }
  return {
    limit: pageLimit(singleValue(raw, 'limit'), DEFAULT_AUDIT_PAGE, MAX_AUDIT_PAGE),
    cursor: singleValue(raw, 'cursor'),
    filters: Object.fromEntries(
      Object.entries(filters).filter(([, v]) => v !== undefined),
    ) as AuditEventFilters,
  };
}

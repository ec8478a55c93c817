import { ApiError } from '../../common/errors/api-error';
import { UID_PATTERN } from '../../common/ids';
import {
  enumList,
  filterText,
  optionalEnum,
  pageLimit,
  RawQuery,
  singleValue as single,
  timestampParam as timestamp,
} from '../../common/query-params';
import { ARTIFACT_TYPES, ArtifactType } from '../artifacts';
import type { Run } from './entities/run.entity';
import { assertMetadataPair } from './run-metadata.rules';
import { RUN_SOURCES, RUN_STATES, RunSource, RunState } from './run-state';

export const RUN_SORT_FIELDS = ['updated_at', 'created_at', 'title', 'agent'] as const;
export type RunSortField = (typeof RUN_SORT_FIELDS)[number];
export const SORT_ORDERS = ['desc', 'asc'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];
export const EXECUTION_LOCATIONS = ['LOCAL', 'REMOTE'] as const;
export type ExecutionLocation = (typeof EXECUTION_LOCATIONS)[number];

export const EMPTY_ENVIRONMENT = 'empty-environment';
export const DEFAULT_RUN_LIST_LIMIT = 20;
export const MAX_RUN_LIST_LIMIT = 500;
export const MAX_METADATA_FILTERS = 5;
const MAX_Q_LENGTH = 256;

export interface RunListParams {
  limit: number;
  cursor?: string;
  sortBy: RunSortField;
  sortOrder: SortOrder;
  states?: RunState[];
  sources?: RunSource[];
  executionLocation?: ExecutionLocation;
  name?: string;
  modelId?: string;
  creator?: string;
  executor?: string;
  createdAfter?: Date;
  createdBefore?: Date;
  updatedAfter?: Date;
  environmentId?: string;
  skillSpec?: string;
  scheduleId?: string;
  ancestorRunId?: string;
  artifactType?: ArtifactType;
  q?: string;
  metadata?: Record<string, string>;
}

export interface RunListPage {
  runs: Run[];
  nextCursor: string | null;
}

/**
 * Validates the raw Express query of GET /agent/runs. Unknown parameters (newer SDK filters such
 * as factory_uid or task_status) are ignored; documented ones are checked strictly.
 */
export function parseRunListParams(
  raw: RawQuery,
  opts: { metadataFilterEnabled: boolean },
): RunListParams {
  const params: RunListParams = {
    limit: pageLimit(single(raw, 'limit'), DEFAULT_RUN_LIST_LIMIT, MAX_RUN_LIST_LIMIT),
    cursor: single(raw, 'cursor'),
    sortBy: optionalEnum(raw, 'sort_by', RUN_SORT_FIELDS) ?? 'updated_at',
    sortOrder: optionalEnum(raw, 'sort_order', SORT_ORDERS) ?? 'desc',
    states: enumList(raw, 'state', RUN_STATES),
    sources: enumList(raw, 'source', RUN_SOURCES),
    executionLocation: optionalEnum(raw, 'execution_location', EXECUTION_LOCATIONS),
    name: filterText(raw, 'name'),
    modelId: filterText(raw, 'model_id'),
    creator: filterText(raw, 'creator'),
    executor: filterText(raw, 'executor'),
    createdAfter: timestamp(raw, 'created_after', 'floor'),
    createdBefore: timestamp(raw, 'created_before', 'ceil'),
    updatedAfter: timestamp(raw, 'updated_after', 'floor'),
    environmentId: environmentId(single(raw, 'environment_id')),
    skillSpec: skillSpec(raw),
    scheduleId: filterText(raw, 'schedule_id'),
    ancestorRunId: filterText(raw, 'ancestor_run_id'),
    artifactType: optionalEnum(raw, 'artifact_type', ARTIFACT_TYPES),
    q: searchText(single(raw, 'q')),
    metadata: metadataFilters(raw, opts.metadataFilterEnabled),
  };
  return withoutUndefined(params);
}

function environmentId(value: string | undefined): string | undefined {
  if (value === undefined || value === EMPTY_ENVIRONMENT || UID_PATTERN.test(value)) return value;
  throw ApiError.invalid(
    'environment_id',
    `must be 22 characters of [A-Za-z0-9] or "${EMPTY_ENVIRONMENT}"`,
  );
}

function skillSpec(raw: RawQuery): string | undefined {
  const spec = filterText(raw, 'skill_spec');
  const alias = filterText(raw, 'skill');
  if (spec !== undefined && alias !== undefined && spec !== alias) {
    throw ApiError.invalid('skill', 'is an alias of skill_spec and must not differ from it');
  }
  return spec ?? alias;
}

function searchText(value: string | undefined): string | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (Array.from(text).length > MAX_Q_LENGTH) {
    throw ApiError.invalid('q', `must be at most ${MAX_Q_LENGTH} characters`);
  }
  return text;
}

/** `metadata[key]=value` pairs (simple parser) or a nested `metadata` object (extended parser). */
function metadataFilters(raw: RawQuery, enabled: boolean): Record<string, string> | undefined {
  const entries = metadataEntries(raw);
  if (!entries.length) return undefined;
  if (!enabled) {
    throw new ApiError('feature_not_available', 'metadata filtering is disabled on this server');
  }
  const pairs: Record<string, string> = {};
  for (const [key, value] of entries) {
    const text = metadataValue(key, value);
    assertMetadataPair(key, text, 'metadata', `metadata[${key}]`);
    if (key in pairs && pairs[key] !== text) {
      throw ApiError.invalid(`metadata[${key}]`, 'must be given at most once');
    }
    pairs[key] = text;
  }
  if (Object.keys(pairs).length > MAX_METADATA_FILTERS) {
    throw ApiError.invalid('metadata', `at most ${MAX_METADATA_FILTERS} pairs may be given`);
  }
  return pairs;
}

function metadataEntries(raw: RawQuery): [string, unknown][] {
  const entries: [string, unknown][] = [];
  for (const [name, value] of Object.entries(raw)) {
    const match = /^metadata\[(.*)\]$/s.exec(name);
    if (match) entries.push([match[1], value]);
  }
  const nested = raw.metadata;
  if (nested === undefined || nested === null || nested === '') return entries;
  if (typeof nested !== 'object' || Array.isArray(nested)) {
    throw ApiError.invalid('metadata', 'must be given as metadata[key]=value');
  }
  return entries.concat(Object.entries(nested));
}

function metadataValue(key: string, value: unknown): string {
  const name = `metadata[${key}]`;
  const list = Array.isArray(value) ? value : [value];
  if (list.length > 1) throw ApiError.invalid(name, 'must be given at most once');
  const text: unknown = list[0];
  if (typeof text !== 'string') throw ApiError.invalid(name, 'must be a plain string value');
  return text;
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

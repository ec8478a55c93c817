import { applyDecorators } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { ARTIFACT_TYPES } from '../artifacts';
import { DEFAULT_RUN_LIST_LIMIT, MAX_RUN_LIST_LIMIT } from './run-list.params';
import { RUN_SOURCES, RUN_STATES } from './run-state';

/** OpenAPI description of GET /agent/runs query parameters, named exactly as in the Oz spec. */
export function ApiRunListQuery() {
  const optional = { required: false } as const;
  const text = (name: string, description: string) =>
    ApiQuery({ name, description, type: String, ...optional });
  const time = (name: string, description: string) =>
    ApiQuery({ name, description, type: String, format: 'date-time', ...optional } as never);
  return applyDecorators(
    ApiQuery({
      name: 'limit',
      schema: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_RUN_LIST_LIMIT,
        default: DEFAULT_RUN_LIST_LIMIT,
      },
      description: `Maximum number of runs to return (1-${MAX_RUN_LIST_LIMIT}, default ${DEFAULT_RUN_LIST_LIMIT})`,
      ...optional,
    }),
    text('cursor', 'Pagination cursor from previous response'),
    ApiQuery({
      name: 'sort_by',
      enum: ['updated_at', 'created_at', 'title', 'agent'],
      ...optional,
    }),
    ApiQuery({ name: 'sort_order', enum: ['asc', 'desc'], ...optional }),
    ApiQuery({
      name: 'state',
      enum: RUN_STATES,
      enumName: 'RunState',
      isArray: true,
      description: 'Repeatable',
      ...optional,
    }),
    ApiQuery({
      name: 'source',
      enum: RUN_SOURCES,
      enumName: 'RunSourceType',
      isArray: true,
      description: 'Repeatable',
      ...optional,
    }),
    ApiQuery({
      name: 'execution_location',
      enum: ['LOCAL', 'REMOTE'],
      enumName: 'RunExecutionLocation',
      ...optional,
    }),
    text('name', 'Filter by agent config name'),
    text('model_id', 'Filter by model ID'),
    text('creator', 'Filter by creator UID'),
    text('executor', 'Filter by executor UID'),
    time('created_after', 'Runs created after this timestamp (RFC 3339)'),
    time('created_before', 'Runs created before this timestamp (RFC 3339)'),
    time('updated_after', 'Runs updated after this timestamp (RFC 3339)'),
    text('environment_id', 'Environment UID (22 characters) or "empty-environment"'),
    text('skill', 'Alias for skill_spec'),
    text('skill_spec', 'Filter by skill spec (e.g. "owner/repo:path/to/SKILL.md")'),
    text('schedule_id', 'Filter by the scheduled agent that created the runs'),
    text('ancestor_run_id', 'Runs descending from this run (must exist and be visible)'),
    ApiQuery({ name: 'artifact_type', enum: ARTIFACT_TYPES, ...optional }),
    text('q', 'Search over title, prompt and skill spec; also an exact run ID or run URL'),
    ApiQuery({
      name: 'metadata',
      style: 'deepObject',
      explode: true,
      schema: { type: 'object', additionalProperties: { type: 'string' } },
      description: 'metadata[key]=value pairs, ANDed, at most 5',
      ...optional,
    } as never),
  );
}

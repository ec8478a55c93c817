import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/**
 * The Oz union schemas (artifacts, conversation content blocks) as the official OpenAPI defines them —
 * oneOf with a discriminator, every variant typed — copied from oz-agent-api-openapi.yaml, plus the
 * EXTERNAL_REFERENCE artifact of the latest Oz. The DTOs cannot express a discriminated union, so
 * buildOpenApiDocument puts these in place of the flat DTO schemas of the same names.
 */
export const OZ_UNION_SCHEMAS: Record<string, SchemaObject> = {
  ActionCategory: {
    type: 'string',
    description: 'High-level category of an action performed during the conversation',
    enum: ['command', 'files', 'search', 'integration', 'documents', 'computer', 'review', 'skill'],
  },
  ActionContentBlock: {
    type: 'object',
    required: ['type', 'id', 'category', 'name', 'input'],
    properties: {
      type: { type: 'string', enum: ['action'] },
      message_id: {
        type: 'string',
        description:
          'Underlying transcript message ID that produced this content block, when available',
      },
      id: { type: 'string', description: 'Unique identifier for the action' },
      category: { $ref: '#/components/schemas/ActionCategory' },
      name: {
        type: 'string',
        description: 'Public action name, such as run_command or edit_files',
      },
      input: {
        type: 'object',
        additionalProperties: true,
        description:
          'Curated public input for this action. This object is owned by the API and is not a raw internal tool payload.',
      },
    },
  },
  ActionResultContentBlock: {
    type: 'object',
    required: ['type', 'action_id', 'category', 'name', 'state', 'output'],
    properties: {
      type: { type: 'string', enum: ['action_result'] },
      message_id: {
        type: 'string',
        description:
          'Underlying transcript message ID that produced this content block, when available',
      },
      action_id: { type: 'string', description: 'Identifier of the corresponding action' },
      category: { $ref: '#/components/schemas/ActionCategory' },
      name: {
        type: 'string',
        description: 'Public action name matching the corresponding action block',
      },
      state: { $ref: '#/components/schemas/ActionState' },
      output: {
        type: 'object',
        additionalProperties: true,
        description:
          'Curated public result for this action. Large or binary internal payloads should be summarized rather than passed through raw.',
      },
    },
  },
  ActionState: {
    type: 'string',
    description: 'State of an action result',
    enum: ['running', 'completed', 'failed', 'denied'],
  },
  ArtifactItem: {
    oneOf: [
      { $ref: '#/components/schemas/PlanArtifact' },
      { $ref: '#/components/schemas/PullRequestArtifact' },
      { $ref: '#/components/schemas/ScreenshotArtifact' },
      { $ref: '#/components/schemas/FileArtifact' },
      { $ref: '#/components/schemas/ExternalReferenceArtifact' },
    ],
    discriminator: {
      propertyName: 'artifact_type',
      mapping: {
        PLAN: '#/components/schemas/PlanArtifact',
        PULL_REQUEST: '#/components/schemas/PullRequestArtifact',
        SCREENSHOT: '#/components/schemas/ScreenshotArtifact',
        FILE: '#/components/schemas/FileArtifact',
        EXTERNAL_REFERENCE: '#/components/schemas/ExternalReferenceArtifact',
      },
    },
  },
  ArtifactResponse: {
    oneOf: [
      { $ref: '#/components/schemas/PlanArtifactResponse' },
      { $ref: '#/components/schemas/ScreenshotArtifactResponse' },
      { $ref: '#/components/schemas/FileArtifactResponse' },
    ],
    discriminator: {
      propertyName: 'artifact_type',
      mapping: {
        PLAN: '#/components/schemas/PlanArtifactResponse',
        SCREENSHOT: '#/components/schemas/ScreenshotArtifactResponse',
        FILE: '#/components/schemas/FileArtifactResponse',
      },
    },
  },
  ConversationContentBlock: {
    oneOf: [
      { $ref: '#/components/schemas/TextContentBlock' },
      { $ref: '#/components/schemas/ActionContentBlock' },
      { $ref: '#/components/schemas/ActionResultContentBlock' },
      { $ref: '#/components/schemas/EventContentBlock' },
    ],
    discriminator: {
      propertyName: 'type',
      mapping: {
        text: '#/components/schemas/TextContentBlock',
        action: '#/components/schemas/ActionContentBlock',
        action_result: '#/components/schemas/ActionResultContentBlock',
        event: '#/components/schemas/EventContentBlock',
      },
    },
  },
  EventContentBlock: {
    type: 'object',
    required: ['type', 'name', 'data'],
    properties: {
      type: { type: 'string', enum: ['event'] },
      message_id: {
        type: 'string',
        description:
          'Underlying transcript message ID that produced this content block, when available',
      },
      name: {
        type: 'string',
        description: 'Event type for intentionally exposed non-core transcript events',
      },
      data: {
        type: 'object',
        additionalProperties: true,
        description: 'Minimal structured metadata for the event',
      },
    },
  },
  ExternalReferenceArtifact: {
    type: 'object',
    required: ['artifact_type', 'created_at', 'data'],
    properties: {
      artifact_type: { type: 'string', enum: ['EXTERNAL_REFERENCE'] },
      created_at: { type: 'string', format: 'date-time' },
      data: { $ref: '#/components/schemas/ExternalReferenceArtifactData' },
    },
  },
  ExternalReferenceArtifactData: {
    type: 'object',
    required: ['url'],
    properties: {
      url: { type: 'string', format: 'uri', description: 'URL of the external reference' },
      reference_type: { type: 'string', description: 'Kind of reference, e.g. issue or document' },
      title: { type: 'string' },
      metadata: { type: 'object', additionalProperties: true },
    },
    additionalProperties: true,
  },
  FileArtifact: {
    type: 'object',
    required: ['artifact_type', 'created_at', 'data'],
    properties: {
      artifact_type: { type: 'string', enum: ['FILE'], description: 'Type of the artifact' },
      created_at: {
        type: 'string',
        format: 'date-time',
        description: 'Timestamp when the artifact was created (RFC3339)',
      },
      data: { $ref: '#/components/schemas/FileArtifactData' },
    },
  },
  FileArtifactData: {
    type: 'object',
    required: ['artifact_uid', 'filepath', 'filename', 'mime_type'],
    properties: {
      artifact_uid: { type: 'string', description: 'Unique identifier for the file artifact' },
      filepath: {
        type: 'string',
        description: 'Conversation-relative filepath for the uploaded file',
      },
      filename: { type: 'string', description: 'Last path component of filepath' },
      description: { type: 'string', description: 'Optional description of the file' },
      mime_type: { type: 'string', description: 'MIME type of the uploaded file' },
      size_bytes: {
        type: 'integer',
        format: 'int64',
        description: 'Size of the uploaded file in bytes',
      },
    },
  },
  FileArtifactResponse: {
    type: 'object',
    description: 'Response for retrieving a file artifact.',
    required: ['artifact_uid', 'artifact_type', 'created_at', 'data'],
    properties: {
      artifact_uid: { type: 'string', description: 'Unique identifier (UUID) for the artifact' },
      artifact_type: { type: 'string', enum: ['FILE'], description: 'Type of the artifact' },
      created_at: {
        type: 'string',
        format: 'date-time',
        description: 'Timestamp when the artifact was created (RFC3339)',
      },
      data: { $ref: '#/components/schemas/FileArtifactResponseData' },
    },
  },
  FileArtifactResponseData: {
    type: 'object',
    description: 'Response data for a file artifact, including a signed download URL.',
    required: ['download_url', 'expires_at', 'content_type', 'filepath', 'filename'],
    properties: {
      download_url: {
        type: 'string',
        format: 'uri',
        description: 'Time-limited signed URL to download the file',
      },
      expires_at: {
        type: 'string',
        format: 'date-time',
        description: 'Timestamp when the download URL expires (RFC3339)',
      },
      content_type: { type: 'string', description: 'MIME type of the uploaded file' },
      filepath: {
        type: 'string',
        description: 'Conversation-relative filepath for the uploaded file',
      },
      filename: { type: 'string', description: 'Last path component of filepath' },
      description: { type: 'string', description: 'Optional description of the file' },
      size_bytes: {
        type: 'integer',
        format: 'int64',
        description: 'Size of the uploaded file in bytes',
      },
    },
  },
  PlanArtifact: {
    type: 'object',
    required: ['artifact_type', 'created_at', 'data'],
    properties: {
      artifact_type: { type: 'string', enum: ['PLAN'], description: 'Type of the artifact' },
      created_at: {
        type: 'string',
        format: 'date-time',
        description: 'Timestamp when the artifact was created (RFC3339)',
      },
      data: { $ref: '#/components/schemas/PlanArtifactData' },
    },
  },
  PlanArtifactData: {
    type: 'object',
    required: ['document_uid'],
    properties: {
      artifact_uid: {
        type: 'string',
        description:
          'Unique identifier for the plan artifact, usable with the artifact retrieval endpoint',
      },
      document_uid: { type: 'string', description: 'Unique identifier for the plan document' },
      notebook_uid: {
        type: 'string',
        description: 'Unique identifier for the associated notebook',
      },
      url: { type: 'string', format: 'uri', description: 'URL to open the plan in Warp Drive' },
      title: { type: 'string', description: 'Title of the plan' },
    },
  },
  PlanArtifactResponse: {
    type: 'object',
    description: 'Response for retrieving a plan artifact.',
    required: ['artifact_uid', 'artifact_type', 'created_at', 'data'],
    properties: {
      artifact_uid: { type: 'string', description: 'Unique identifier (UUID) for the artifact' },
      artifact_type: { type: 'string', enum: ['PLAN'], description: 'Type of the artifact' },
      created_at: {
        type: 'string',
        format: 'date-time',
        description: 'Timestamp when the artifact was created (RFC3339)',
      },
      data: { $ref: '#/components/schemas/PlanArtifactResponseData' },
    },
  },
  PlanArtifactResponseData: {
    type: 'object',
    description: 'Response data for a plan artifact, including current markdown content.',
    required: ['document_uid', 'notebook_uid', 'content', 'content_type'],
    properties: {
      document_uid: { type: 'string', description: 'Unique identifier for the plan document' },
      notebook_uid: {
        type: 'string',
        description: 'Unique identifier for the associated notebook',
      },
      url: { type: 'string', format: 'uri', description: 'URL to open the plan in Warp Drive' },
      title: { type: 'string', description: 'Current title of the plan' },
      content: { type: 'string', description: 'Current markdown content of the plan' },
      content_type: { type: 'string', description: 'MIME type of the returned plan content' },
    },
  },
  PullRequestArtifact: {
    type: 'object',
    required: ['artifact_type', 'created_at', 'data'],
    properties: {
      artifact_type: {
        type: 'string',
        enum: ['PULL_REQUEST'],
        description: 'Type of the artifact',
      },
      created_at: {
        type: 'string',
        format: 'date-time',
        description: 'Timestamp when the artifact was created (RFC3339)',
      },
      data: { $ref: '#/components/schemas/PullRequestArtifactData' },
    },
  },
  PullRequestArtifactData: {
    type: 'object',
    required: ['url', 'branch'],
    properties: {
      url: { type: 'string', format: 'uri', description: 'URL of the pull request' },
      branch: { type: 'string', description: 'Branch name for the pull request' },
    },
  },
  ScreenshotArtifact: {
    type: 'object',
    required: ['artifact_type', 'created_at', 'data'],
    properties: {
      artifact_type: { type: 'string', enum: ['SCREENSHOT'], description: 'Type of the artifact' },
      created_at: {
        type: 'string',
        format: 'date-time',
        description: 'Timestamp when the artifact was created (RFC3339)',
      },
      data: { $ref: '#/components/schemas/ScreenshotArtifactData' },
    },
  },
  ScreenshotArtifactData: {
    type: 'object',
    required: ['artifact_uid', 'mime_type'],
    properties: {
      artifact_uid: {
        type: 'string',
        description: 'Unique identifier for the screenshot artifact',
      },
      mime_type: { type: 'string', description: 'MIME type of the screenshot image' },
      description: { type: 'string', description: 'Optional description of the screenshot' },
    },
  },
  ScreenshotArtifactResponse: {
    type: 'object',
    description: 'Response for retrieving a screenshot artifact.',
    required: ['artifact_uid', 'artifact_type', 'created_at', 'data'],
    properties: {
      artifact_uid: { type: 'string', description: 'Unique identifier (UUID) for the artifact' },
      artifact_type: { type: 'string', enum: ['SCREENSHOT'], description: 'Type of the artifact' },
      created_at: {
        type: 'string',
        format: 'date-time',
        description: 'Timestamp when the artifact was created (RFC3339)',
      },
      data: { $ref: '#/components/schemas/ScreenshotArtifactResponseData' },
    },
  },
  ScreenshotArtifactResponseData: {
    type: 'object',
    description: 'Response data for a screenshot artifact, including a signed download URL.',
    required: ['download_url', 'expires_at', 'content_type'],
    properties: {
      download_url: {
        type: 'string',
        format: 'uri',
        description: 'Time-limited signed URL to download the screenshot',
      },
      expires_at: {
        type: 'string',
        format: 'date-time',
        description: 'Timestamp when the download URL expires (RFC3339)',
      },
      content_type: {
        type: 'string',
        description: 'MIME type of the screenshot (e.g., image/png)',
      },
      description: { type: 'string', description: 'Optional description of the screenshot' },
    },
  },
  TextContentBlock: {
    type: 'object',
    required: ['type', 'text'],
    properties: {
      type: { type: 'string', enum: ['text'] },
      message_id: {
        type: 'string',
        description:
          'Underlying transcript message ID that produced this content block, when available',
      },
      text: { type: 'string', description: 'Plain text content' },
    },
  },
};

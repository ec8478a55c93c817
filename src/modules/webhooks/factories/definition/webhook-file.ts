import { SECRET_NAME_PATTERN } from '../../../secrets';
import { FileDiagnostics, START } from './diagnostics';
import { AUTH_MODES, WebhookSpec } from './definition.types';
import type { DefinitionVocabulary } from './definition-vocabulary';
import { MapReader } from './map-reader';
import { YamlSource } from './yaml-source';

export const WEBHOOK_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** RFC 9110 token characters. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;

/** `webhooks/<name>.yaml`: one custom webhook. It never contains the secret, only its name. */
export function parseWebhookFile(
  name: string,
  path: string,
  content: string,
  diagnostics: FileDiagnostics,
  vocabulary: DefinitionVocabulary,
): WebhookSpec | null {
  if (!WEBHOOK_NAME.test(name)) {
    diagnostics.add(
      'invalid_path',
      START,
      `webhook name "${name}" must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit`,
    );
    return null;
  }
  const source = new YamlSource(content, diagnostics);
  if (!source.ok) return null;
  const reader = MapReader.of(source, diagnostics, [], source.value ?? {}, `${path}`);
  if (!reader) return null;
  reader.allowOnly(
    ['authMode', 'signatureScheme', 'secretName', 'deliveryIdHeader', 'enabled'],
    'a webhook file',
  );
  const authMode = reader.oneOf('authMode', AUTH_MODES, 'token');
  const scheme = reader.oneOf('signatureScheme', vocabulary.signatureSchemes);
  if (authMode === 'signature' && !reader.has('signatureScheme')) {
    reader.error(
      'authMode',
      'required',
      `"signatureScheme" is required with authMode: signature (one of ${vocabulary.signatureSchemes.join(', ')})`,
    );
  }
  if (authMode && authMode !== 'signature' && reader.has('signatureScheme')) {
    reader.error(
      'signatureScheme',
      'invalid_value',
      `"signatureScheme" is only allowed with authMode: signature`,
    );
  }
  const secretName = reader.string('secretName', {
    required: true,
    pattern: SECRET_NAME_PATTERN,
    rule: 'must name a team secret (letters, digits and _, starting with a letter or _)',
  });
  const header = reader.string('deliveryIdHeader', {
    pattern: HEADER_NAME,
    rule: 'must be a valid HTTP header name',
  });
  if (header && vocabulary.credentialHeaders.has(header.toLowerCase())) {
    reader.error(
      'deliveryIdHeader',
      'invalid_value',
      `"deliveryIdHeader" must not be a credential header (${header})`,
    );
  }
  const enabled = reader.bool('enabled', true);
  if (!authMode || secretName === undefined || (authMode === 'signature' && !scheme)) return null;
  if (reader.has('deliveryIdHeader') && header === undefined) return null;
  return {
    name,
    path,
    authMode,
    signatureScheme: authMode === 'signature' ? scheme! : null,
    secretName,
    deliveryIdHeader: header ?? null,
    enabled,
    positions: { secretName: reader.at('secretName'), file: START },
  };
}

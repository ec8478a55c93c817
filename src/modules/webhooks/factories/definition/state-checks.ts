import type { EntityManager } from 'typeorm';
import type { ModelsService } from '../../../models';
import type { TeamSecretsService } from '../../../secrets';
import type { Webhook } from '../../entities/webhook.entity';
import type { SignatureVerifierRegistry } from '../../verifiers';
import { secretProblem } from '../../webhook-secrets';
import { Diagnostic } from './diagnostics';
import { CheckableDefinition, WebhookSpec } from './definition.types';

export interface StateContext {
  manager: EntityManager;
  teamId: string;
  /** Every webhook the factory ever had (deleted ones keep their UID referable). */
  existingWebhooks: Webhook[];
  managed: boolean;
  secrets: TeamSecretsService;
  models: ModelsService;
  verifiers: SignatureVerifierRegistry;
}

/**
 * The checks that need stored state: secrets exist and suit their webhook, webhook UIDs belong
 * to the factory, models exist, and (managed factories) no webhook is renamed. Returns the
 * secret value of each webhook for the snapshot.
 */
export async function checkAgainstState(
  definition: CheckableDefinition,
  context: StateContext,
): Promise<{
  diagnostics: Diagnostic[];
  warnings: Diagnostic[];
  secretValues: Map<string, string>;
}> {
  const diagnostics: Diagnostic[] = [];
  const warnings: Diagnostic[] = [];
  const secretValues = new Map<string, string>();
  for (const spec of definition.webhooks) {
    const problem = await secretFor(spec, context, secretValues);
    if (problem)
      diagnostics.push({
        code: 'invalid_secret',
        path: spec.path,
        ...spec.positions.secretName,
        message: problem,
      });
  }

  const live = context.existingWebhooks.filter((w) => !w.deletedAt);
  if (context.managed) {
    const names = new Set(definition.webhookFiles.map((w) => w.name));
    const removed = live.filter((w) => !names.has(w.name)).map((w) => w.name);
    const added = definition.webhookFiles.filter((w) => !live.some((l) => l.name === w.name));
    for (const spec of removed.length ? added : []) {
      diagnostics.push({
        code: 'rename_not_supported',
        path: spec.path,
        line: 1,
        column: 1,
        message: `renaming webhooks is not supported on managed factories (${removed.join(', ')} removed and ${spec.name} added in one apply); delete the old webhook first, then add the new one`,
      });
    }
  }

  const known = new Set(context.existingWebhooks.map((w) => w.id));
  for (const automation of definition.automations) {
    automation.triggers.forEach((trigger) =>
      trigger.webhookIds.forEach((id, i) => {
        if (!known.has(id)) {
          diagnostics.push({
            code: 'unknown_webhook',
            path: automation.path,
            ...trigger.positions.webhookIds[i],
            message: `webhook_ids: no webhook with UID "${id}" in this factory`,
          });
        }
      }),
    );
    checkModel(automation.execution.model, automation.path, automation.positions.model, context, {
      diagnostics,
      warnings,
    });
  }
  for (const agent of definition.agents) {
    checkModel(agent.execution.model, agent.path, agent.positions.model, context, {
      diagnostics,
      warnings,
    });
  }
  checkModel(
    definition.factory?.agentDefaults.model,
    'factory.yaml',
    { line: 1, column: 1 },
    context,
    { diagnostics, warnings },
  );
  return { diagnostics, warnings, secretValues };
}

async function secretFor(
  spec: WebhookSpec,
  context: StateContext,
  values: Map<string, string>,
): Promise<string | null> {
  const value = await context.secrets.reveal(context.teamId, spec.secretName, context.manager);
  if (value === null)
    return `secretName: team secret "${spec.secretName}" does not exist; create it first`;
  const problem =
    secretProblem(spec.authMode, value) ??
    (spec.signatureScheme
      ? (context.verifiers.get(spec.signatureScheme)?.checkSecret(value) ?? null)
      : null);
  if (problem)
    return `secretName: team secret "${spec.secretName}" cannot be used here: ${problem}`;
  values.set(spec.name, value);
  return null;
}

/**
 * A model missing from the catalogue refuses the definition; a known model that is not enabled
 * (disabled, or its provider key unset) only warns: it may be enabled later, and until then each
 * run it would start is refused, with the reason in the delivery log.
 */
function checkModel(
  model: string | undefined,
  path: string,
  at: { line: number; column: number },
  context: StateContext,
  found: { diagnostics: Diagnostic[]; warnings: Diagnostic[] },
) {
  if (!model || model === 'auto') return;
  const entry = context.models.find(model);
  if (!entry) {
    found.diagnostics.push({
      code: 'unknown_model',
      path,
      ...at,
      message: `model "${model}" is not in the model catalogue (GET /agent/models)`,
    });
  } else if (entry.disableReason) {
    const fallback = context.models.find(context.models.catalog.defaultModelId);
    const hint = fallback?.disableReason
      ? ''
      : `; omit the model to use the default (${fallback?.id})`;
    found.warnings.push({
      code: 'model_not_enabled',
      path,
      ...at,
      message: `model "${model}" is not enabled (${entry.disableDetail ?? entry.disableReason}): the runs it would start are refused until it is${hint}`,
    });
  }
}

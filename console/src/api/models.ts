import { modelDisableLabel } from '../labels';

/** The part of GET /agent/models the run forms need. */
export interface ModelChoices {
  default_model_id: string;
  models: { id: string; disabled: boolean }[];
}

/** Whether the catalogue's default model can run (a run naming no model uses it). */
export function defaultModelEnabled(list: ModelChoices): boolean {
  return list.models.some((m) => m.id === list.default_model_id && !m.disabled);
}

/**
 * The model a run form starts with: '' (the default) when the default can run, else the first
 * model that can, else '' (none is enabled; the form says how to fix that).
 */
export function initialModel(list: ModelChoices): string {
  if (defaultModelEnabled(list)) return '';
  return list.models.find((m) => !m.disabled)?.id ?? '';
}

/** What the console needs to say why a model cannot run. */
export interface ModelAvailability {
  disabled: boolean;
  disable_reason?: string;
  disable_detail?: string;
  missing_provider_key?: boolean;
  provider_key_env?: string;
}

/**
 * Why a model cannot run, in words; undefined when it can. A provider key that is simply not set
 * says so (the API's disable_reason is then ADMIN_DISABLED, which is no administrator's choice).
 */
export function modelUnavailableReason(model: ModelAvailability): string | undefined {
  if (!model.disabled) return undefined;
  if (model.missing_provider_key) {
    return `Provider key not set${model.provider_key_env ? ` (${model.provider_key_env})` : ''}`;
  }
  const reason = model.disable_reason && modelDisableLabel(model.disable_reason);
  return [reason, model.disable_detail].filter(Boolean).join(': ') || 'Disabled';
}

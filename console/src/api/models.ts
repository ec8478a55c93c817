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

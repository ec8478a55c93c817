/** The extension points whose registered names the OpenAPI document lists as enums. */
export type RegistryPoint = 'harness_type' | 'signature_scheme' | 'sandbox_backend';

const MARKER = 'x-ambient-registry';

/**
 * Spread into `@ApiProperty` options of a field whose values are a registry's names: the served
 * document lists this application's names (built-in and extension ones) as the field's enum.
 */
export function registryEnum(point: RegistryPoint) {
  return { type: String, [MARKER]: point } as const;
}

/** Replaces every registry marker of a generated document with the registry's current names. */
export function fillRegistryEnums(node: unknown, names: Record<RegistryPoint, string[]>): void {
  if (Array.isArray(node)) {
    for (const item of node) fillRegistryEnums(item, names);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const record = node as Record<string, unknown>;
  const point = record[MARKER];
  if (point === 'harness_type' || point === 'signature_scheme' || point === 'sandbox_backend') {
    record.enum = [...names[point]];
    delete record[MARKER];
  }
  for (const value of Object.values(record)) fillRegistryEnums(value, names);
}

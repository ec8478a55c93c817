const MARKER = 'x-ambient-registry';

/**
 * Spread into `@ApiProperty` options of a field whose values are the names of a registry
 * (`point`: `harness_type`, `signature_scheme`, …): the served document lists this application's
 * names (built-in and extension ones) as the field's enum.
 */
export function registryEnum(point: string) {
  return { type: String, [MARKER]: point } as const;
}

/**
 * Replaces every registry marker of a generated document with the names of its registry. A
 * marker whose point has no names here is a mistake (a misspelt point): it throws, naming it.
 */
export function fillRegistryEnums(
  node: unknown,
  names: Readonly<Record<string, readonly string[]>>,
): void {
  if (Array.isArray(node)) {
    for (const item of node) fillRegistryEnums(item, names);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const record = node as Record<string, unknown>;
  if (MARKER in record) {
    const point = String(record[MARKER]);
    if (!Object.hasOwn(names, point)) {
      throw new Error(`OpenAPI: no registry names for ${MARKER} "${point}"`);
    }
    record.enum = [...names[point]];
    delete record[MARKER];
  }
  for (const value of Object.values(record)) fillRegistryEnums(value, names);
}

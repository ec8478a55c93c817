/**
 * Spread into `@ApiProperty` options of a field Oz does not have, so the published OpenAPI says
 * `x-ambient-extension: true` on it (operations: `AMBIENT_EXTENSION_PATHS`; whole schemas:
 * `AMBIENT_EXTENSION_SCHEMAS`, both in bootstrap/openapi-contract.ts).
 */
export const AMBIENT_EXTENSION = { 'x-ambient-extension': true } as const;

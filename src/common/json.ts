/**
 * A JSON object stored in a JSON column. Values are `any` because TypeORM's deep-partial insert
 * types cannot follow a recursive JSON type ("type instantiation is excessively deep").
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JsonObject = Record<string, any>;

/**
 * The column types the migrations use beside plain utf8mb4 text, for entities to declare them as
 * the migrations made them (test/schema-drift.e2e-spec.ts compares the two).
 */

/** An identifier or token: `VARCHAR(n) CHARACTER SET ascii COLLATE ascii_bin` (compact, case-sensitive). */
export function asciiId(length: number) {
  return { type: 'varchar', length, charset: 'ascii', collation: 'ascii_bin' } as const;
}

/** A word from a fixed vocabulary (a state, a mode): `VARCHAR(n) CHARACTER SET ascii`. */
export function asciiWord(length: number) {
  return { type: 'varchar', length, charset: 'ascii' } as const;
}

/** Text compared byte for byte (names, paths, keys): `VARCHAR(n) … COLLATE utf8mb4_bin`. */
export function exactText(length: number) {
  return { type: 'varchar', length, charset: 'utf8mb4', collation: 'utf8mb4_bin' } as const;
}

/**
 * An extension's entries at a point that takes a list or a function of the start-up context.
 * Its own file, importing no module: teams builds its auth strategy registry with it.
 */
export function entriesOf<T, C>(
  entries: readonly T[] | ((context: C) => readonly T[]) | undefined,
  context: C,
  check: (entry: T) => void,
): readonly T[] {
  const list = typeof entries === 'function' ? entries(context) : (entries ?? []);
  list.forEach(check);
  return list;
}

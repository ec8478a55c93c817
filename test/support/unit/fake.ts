/** A collaborator whose every method is a jest.fn (made on first use), typed as the real one. */
export type Fake<T> = jest.Mocked<T>;

/** Names a fake leaves undefined, so it is not taken for a promise or given lifecycle hooks. */
const NOT_METHODS = new Set<PropertyKey>([
  'then',
  'constructor',
  'onModuleInit',
  'onApplicationBootstrap',
  'onModuleDestroy',
  'beforeApplicationShutdown',
  'onApplicationShutdown',
]);

/**
 * A typed fake of `T`: the members in `given` as they are, every other method a jest.fn that
 * returns undefined until the spec says otherwise (`fake.method.mockResolvedValue(...)`).
 */
export function fake<T extends object>(given: Partial<T> = {}): Fake<T> {
  const made = new Map<PropertyKey, jest.Mock>();
  return new Proxy(given as Fake<T>, {
    get: (target, property) => {
      if (property in target) return Reflect.get(target, property);
      if (typeof property === 'symbol' || NOT_METHODS.has(property)) return undefined;
      let method = made.get(property);
      if (!method) made.set(property, (method = jest.fn()));
      return method;
    },
  });
}

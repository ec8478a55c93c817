/**
 * What one contributor (Ambient itself as `ambient`, or an extension) registers at an extension
 * point: a list, or a function of the point's context (what its owner hands in at start-up).
 */
export interface Contribution<T, C = void> {
  owner: string;
  entries: readonly T[] | ((context: C) => readonly T[]);
}

export interface RegistryOptions {
  /** Throws why an entry cannot be registered (its shape); the error is prefixed with its contributor. */
  check?: (entry: unknown) => void;
  /** Names nobody may register, with who holds them (e.g. AMBIENT_SANDBOX's `auto`). */
  reserved?: Readonly<Record<string, string>>;
}

/**
 * The entries of one extension point by name (harness types, signature schemes, sandbox backends,
 * auth strategies), in registration order: Ambient's own first, then the extensions' in the order
 * they load. A name registered twice is refused, naming both contributors.
 */
export class Registry<T> {
  private readonly byName = new Map<string, { owner: string; entry: T }>();

  constructor(
    /** What a name is at this point, for errors: `harness type`, `signature scheme`, … */
    private readonly kind: string,
    private readonly nameOf: (entry: T) => string,
    private readonly options: RegistryOptions = {},
  ) {}

  register(owner: string, entry: T): this {
    try {
      this.options.check?.(entry);
    } catch (err) {
      throw new Error(`extension ${owner}: ${(err as Error).message}`);
    }
    const name = this.nameOf(entry);
    const { reserved = {} } = this.options;
    const earlier =
      this.byName.get(name)?.owner ?? (Object.hasOwn(reserved, name) ? reserved[name] : undefined);
    if (earlier !== undefined) {
      throw new Error(
        `extension ${owner}: ${this.kind} "${name}" is already registered by ${earlier}`,
      );
    }
    this.byName.set(name, { owner, entry });
    return this;
  }

  /** Registers every contribution in order, calling those that are functions with `context`. */
  registerAll<C>(contributions: readonly Contribution<T, C>[], context: C): this {
    for (const { owner, entries } of contributions) {
      const list = typeof entries === 'function' ? entries(context) : entries;
      if (!Array.isArray(list)) {
        throw new Error(`extension ${owner}: its ${this.kind} factory must return a list`);
      }
      for (const entry of list as readonly T[]) this.register(owner, entry);
    }
    return this;
  }

  get(name: string): T | undefined {
    return this.byName.get(name)?.entry;
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** Every entry, in registration order. */
  list(): T[] {
    return [...this.byName.values()].map(({ entry }) => entry);
  }

  /** Every registered name, in registration order (what the OpenAPI document lists as the enum). */
  names(): string[] {
    return [...this.byName.keys()];
  }

  /** Who registered `name` (`ambient` for the built-ins). */
  ownerOf(name: string): string | undefined {
    return this.byName.get(name)?.owner;
  }
}

const NAME = /^[a-z0-9][a-z0-9_.-]*$/;

/** A registrable name: 1-`max` lower-case letters, digits, "_", "." or "-", starting with a letter or digit. */
export function isEntryName(value: unknown, max: number): value is string {
  return typeof value === 'string' && NAME.test(value) && value.length <= max;
}

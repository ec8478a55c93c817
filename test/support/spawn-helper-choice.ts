/** Which spawn helper starts the sandboxes' processes (see off-loop-spawn.ts). */
export type SpawnHelper = 'native' | 'node';

/**
 * `load()` run in a module registry of its own with AMBIENT_PROCESS_SPAWNER set to `helper`:
 * off-loop-spawn looks for the compiled helper once, when it is loaded, so what `load` requires
 * (a sandbox backend, off-loop-spawn itself) starts its processes with that helper.
 */
export function loadedWithSpawnHelper<T>(helper: SpawnHelper, load: () => T): T {
  const before = process.env.AMBIENT_PROCESS_SPAWNER;
  process.env.AMBIENT_PROCESS_SPAWNER = helper;
  let loaded!: T;
  try {
    jest.isolateModules(() => {
      loaded = load();
    });
  } finally {
    if (before === undefined) delete process.env.AMBIENT_PROCESS_SPAWNER;
    else process.env.AMBIENT_PROCESS_SPAWNER = before;
  }
  return loaded;
}

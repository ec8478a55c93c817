/** What Ambient asks of a spawn helper (the Node one or the compiled one: see off-loop-spawn). */
export type ToSpawner =
  | {
      op: 'spawn';
      id: number;
      file: string;
      args: string[];
      cwd: string;
      env: Record<string, string>;
      stdin: 'ignore' | 'pipe';
      /** cgroup.procs files the process joins before it execs (compiled helper only). */
      joinCgroups?: string[];
      /** The network namespace (and with `user`, first the user one) of a pid, entered before exec (idem). */
      enterNamespacesOf?: EnterNamespaces;
      /** `file` is the compiled helper and `args` start with `--confine`: made in its child (idem). */
      confine?: boolean;
    }
  | { op: 'stdin'; id: number; chunk: Uint8Array }
  | { op: 'stdin-end'; id: number }
  | { op: 'pause' | 'resume'; id: number; fd: 1 | 2 }
  /** Ends the process: SIGKILL to its group, or in a sandbox to its supervisor (SandboxSpawner). */
  | { op: 'kill'; id: number };

/** What a spawn helper reports of the processes it started. */
export type FromSpawner =
  | { op: 'spawned'; id: number; pid: number }
  | { op: 'error'; id: number; message: string; code?: string; errno?: number; syscall?: string }
  | { op: 'out'; id: number; fd: 1 | 2; chunk: Uint8Array }
  | { op: 'out-end'; id: number; fd: 1 | 2 }
  | { op: 'exit'; id: number; code: number | null; signal: string | null }
  /** A sandbox's helper is ready for requests (id 0; see SandboxSpawner). */
  | { op: 'ready'; id: number };

/** Whose namespaces a process enters between fork and exec: its network one, after its user one with `user`. */
export interface EnterNamespaces {
  pid: number;
  user: boolean;
}

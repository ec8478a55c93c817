import { readFileSync } from 'node:fs';
import { EgressGuard } from '../../../../common/egress/egress-guard';
import type {
  BoundSecret,
  EgressDecision,
  EgressPolicy,
  EgressRule,
  NetworkMode,
} from '../../../../common/egress/egress-policy';
import {
  EgressRuleError,
  parseEgressRules,
  parseHostPattern,
} from '../../../../common/egress/egress-rules';
import { EgressProxy } from '../egress-proxy/egress-proxy';
import { Sandbox, SandboxEgressProxy, SandboxError } from '../sandbox.types';
import { writeEgressTrust } from './egress-env';

/** What of an environment decides its sandboxes' way out (an EnvironmentConfig is one). */
export interface EgressEnvironment {
  network?: NetworkMode;
  /** The rules as stored (validated when the environment was saved; parsed again here). */
  egress_allow?: unknown;
}

/** What the server gives every execution's proxy. */
export interface EgressServerOptions {
  /** AMBIENT_EGRESS_ALLOW's guard, applied to every destination whatever the rules say. */
  guard: EgressGuard;
  /** CA certificates the proxy trusts upstream beside the process's own trust. */
  upstreamCa?: string[];
}

/**
 * The server's options from its settings (AMBIENT_EGRESS_ALLOW, AMBIENT_EGRESS_UPSTREAM_CA), read
 * once at start-up: an unreadable CA file stops it with the setting named.
 */
export function egressServerOptions(egress: {
  allow: string;
  upstreamCaFile?: string;
}): EgressServerOptions {
  const guard = EgressGuard.fromSetting(egress.allow);
  if (!egress.upstreamCaFile) return { guard };
  let pem: string;
  try {
    pem = readFileSync(egress.upstreamCaFile, 'utf8');
  } catch (error) {
    throw new Error(
      `AMBIENT_EGRESS_UPSTREAM_CA: cannot read ${egress.upstreamCaFile} (${(error as Error).message})`,
    );
  }
  const certificates = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  if (!certificates) {
    throw new Error(
      `AMBIENT_EGRESS_UPSTREAM_CA: ${egress.upstreamCaFile} holds no PEM certificate`,
    );
  }
  return { guard, upstreamCa: certificates };
}

/** What one execution asks of its proxy beside the environment's rules. */
export interface EgressRequest {
  /** The run's secrets bound to hosts: placeholders inside, values injected by the proxy. */
  secrets: BoundSecret[];
  /** Each decision of the proxy, as it is made (the run's timeline and metrics). */
  onDecision?: (decision: EgressDecision) => void;
  /**
   * Hosts (`host:port`) a person approved for this run after the proxy refused them: allowed
   * beside the environment's `egress_allow` for the rest of the run (allowlist mode).
   */
  approvedHosts?: string[];
}

/**
 * The policy of an execution's proxy; null for `none` (no proxy, no way out). Stored rules that
 * no longer parse fail the execution (environment_setup_failed) rather than open anything.
 */
export function egressPolicyFor(
  mode: NetworkMode,
  environment: EgressEnvironment | null,
  secrets: BoundSecret[],
  approvedHosts: string[] = [],
): EgressPolicy | null {
  if (mode === 'none') return null;
  let rules: EgressRule[] = [];
  if (mode === 'allowlist') {
    try {
      rules = parseEgressRules(environment?.egress_allow ?? []);
    } catch (error) {
      if (!(error instanceof EgressRuleError)) throw error;
      throw new SandboxError(`the environment's ${error.message}`, 'environment_setup_failed');
    }
    rules.push(...approvedHosts.map((host, i) => parseHostPattern(host, `approved_hosts.${i}`)));
  }
  return { mode, rules, secrets };
}

/**
 * One execution's egress proxy from its sandbox's opening to its closing: the backend serves it
 * inside the sandbox (`endpoint`), `attach` gives the sandbox's processes the proxy variables and
 * the execution CA, and closing the sandbox closes the proxy.
 */
export class ExecutionEgress {
  private listening: Promise<void> | null = null;
  private closing: Promise<void> | null = null;

  private constructor(private readonly proxy: EgressProxy) {}

  static async start(
    policy: EgressPolicy,
    server: EgressServerOptions,
    onDecision?: (decision: EgressDecision) => void,
  ): Promise<ExecutionEgress> {
    const proxy = await EgressProxy.start({
      policy,
      guard: server.guard,
      ...(onDecision ? { onDecision } : {}),
      ...(server.upstreamCa?.length ? { upstreamCa: server.upstreamCa } : {}),
    });
    return new ExecutionEgress(proxy);
  }

  /** What the backend serves: one socket (a backend retrying its container listens once). */
  get endpoint(): SandboxEgressProxy {
    return {
      listen: (socketPath) => (this.listening ??= this.proxy.listen(socketPath)),
    };
  }

  /**
   * The sandbox whose every process gets the proxy and CA variables (over what the caller
   * passes: a secret named HTTPS_PROXY does not turn the proxy off), and whose close closes the
   * proxy once nothing runs any more.
   */
  async attach(sandbox: Sandbox): Promise<Sandbox> {
    let env: Record<string, string>;
    try {
      env = await writeEgressTrust(
        this.proxy.caCertPem,
        sandbox.privateDir.host,
        sandbox.privateDir.inside,
      );
    } catch (error) {
      await sandbox.close();
      await this.close();
      throw new SandboxError(
        `cannot write the sandbox's CA files: ${(error as Error).message}`,
        'resource_unavailable',
      );
    }
    return {
      backend: sandbox.backend,
      workdir: sandbox.workdir,
      privateDir: sandbox.privateDir,
      path: sandbox.path,
      apiUrl: sandbox.apiUrl,
      spawn: (file, args, options) =>
        sandbox.spawn(file, args, { ...options, env: { ...options.env, ...env } }),
      limitHit: () => sandbox.limitHit(),
      adopt: (hostPath) => sandbox.adopt(hostPath),
      ...(sandbox.commitSnapshot ? { commitSnapshot: (of) => sandbox.commitSnapshot!(of) } : {}),
      close: async () => {
        await sandbox.close();
        await this.close();
      },
    };
  }

  close(): Promise<void> {
    return (this.closing ??= this.proxy.close());
  }
}

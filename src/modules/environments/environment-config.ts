import { NETWORK_MODES } from '../../common/egress/egress-policy';
import type { EgressRuleInput, NetworkMode } from '../../common/egress/egress-policy';
import { pathComponentProblem } from '../../common/tenant-files/path-component';
import type { ApprovalRule, SecretRef } from '../run-config';

/**
 * What processes in a sandbox reach (Ambient extension of environments): nothing, any host
 * through the egress proxy, or only the hosts `egress_allow` lists.
 */
export const NETWORK_POLICIES = NETWORK_MODES;
export type NetworkPolicy = NetworkMode;

/** The stored `EnvironmentConfig` (Oz field names). */
export interface EnvironmentConfig {
  name: string;
  description?: string | null;
  docker_image?: string;
  github_repos?: { owner: string; repo: string }[];
  setup_commands?: string[];
  failure_session_retention_minutes?: number | null;
  /**
   * Team secrets given to the environment's runs as environment variables, by name; one with
   * `inject_hosts` reaches only those hosts, through the egress proxy.
   */
  secrets?: SecretRef[];
  /** Stored and echoed only: Ambient does no cloud identity federation. */
  providers?: ProvidersConfig;
  /** Ambient extension: whether the run's sandbox reaches any network (default: the server's). */
  network?: NetworkPolicy;
  /** Ambient extension: the hosts an `allowlist` sandbox may reach, as written (no effect otherwise). */
  egress_allow?: EgressRuleInput[];
  /** Ambient extension: the sandbox's limits, within the server's maxima (default: the server's). */
  resources?: SandboxResources;
  /** Ambient extension: approval rules of every run in the environment (normalised). */
  approvals?: ApprovalRule[];
}

export interface SandboxResources {
  memory_mb?: number;
  pids?: number;
  cpus?: number;
}

export interface ProvidersConfig {
  aws?: { role_arn: string };
  gcp?: {
    project_number: string;
    workload_identity_federation_pool_id: string;
    workload_identity_federation_provider_id: string;
    service_account_email?: string;
  };
}

/** Owner and repository names git hosts accept; also keeps clone paths inside the workspace. */
export const REPO_PART_PATTERN = /^[A-Za-z0-9_.-]{1,100}$/;

/**
 * An owner or repository name that may become a path component (clone URL, checkout directory):
 * checked again wherever one is used, for rows stored before names were validated.
 */
export function isSafeRepoPart(part: string): boolean {
  return REPO_PART_PATTERN.test(part) && pathComponentProblem(part) === null;
}

/**
 * `<base>/<owner>/<repo>.git`; the base is a URL (https://github.com) or a local directory. Names
 * that are not plain path components (`..`, `/`, a leading `-` …) are refused here too, so a row
 * stored before names were validated cannot point a clone outside the base.
 */
export function cloneUrl(base: string, owner: string, repo: string): string {
  if (!isSafeRepoPart(owner) || !isSafeRepoPart(repo)) {
    throw new Error(`invalid repository name ${JSON.stringify(`${owner}/${repo}`)}`);
  }
  return `${base.replace(/\/+$/, '')}/${owner}/${repo}.git`;
}

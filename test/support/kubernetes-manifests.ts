import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseAllDocuments, parse as parseYaml } from 'yaml';

export const ROOT = resolve(__dirname, '../..');
export const KUBERNETES_DIR = join(ROOT, 'deploy/kubernetes');

/** The parts of Kubernetes objects the manifest test reads. */
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    fieldRef?: { fieldPath: string };
  };
}
export interface Probe {
  httpGet?: { path: string; port: string | number };
}
export interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  allowPrivilegeEscalation?: boolean;
  readOnlyRootFilesystem?: boolean;
  capabilities?: { drop?: string[] };
  seccompProfile?: { type: string };
  appArmorProfile?: { type: string };
  procMount?: string;
}
export interface Container {
  name: string;
  image: string;
  command?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  securityContext?: SecurityContext;
  volumeMounts?: { name: string; mountPath: string }[];
}
export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: SecurityContext;
  terminationGracePeriodSeconds?: number;
  hostUsers?: boolean;
  volumes?: { name: string }[];
}
export interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: PodSpec;
}
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, unknown> & { template?: PodTemplate };
  data?: Record<string, string>;
  /** The file it came from, relative to deploy/kubernetes. */
  file: string;
}

interface Kustomization {
  resources?: string[];
  configMapGenerator?: { name: string; files?: string[] }[];
  images?: { name: string; newName?: string; newTag?: string }[];
}

/** A kustomization directory: its own file and the objects of every resource it lists. */
export interface KustomizeTree {
  dir: string;
  kustomization: Kustomization;
  /** Every file it and the kustomizations it includes read. */
  files: string[];
  objects: K8sObject[];
}

/** Reads a kustomization and what it lists (directories recursively); missing files throw. */
export function readKustomization(dir: string): KustomizeTree {
  const kustomizationFile = join(dir, 'kustomization.yaml');
  const kustomization = parseYaml(readFileSync(kustomizationFile, 'utf8')) as Kustomization;
  const files = [kustomizationFile];
  const objects: K8sObject[] = [];
  for (const resource of kustomization.resources ?? []) {
    const path = resolve(dir, resource);
    if (!existsSync(path)) throw new Error(`${relative(ROOT, dir)} lists missing ${resource}`);
    if (statSync(path).isDirectory()) {
      const nested = readKustomization(path);
      files.push(...nested.files);
      objects.push(...nested.objects);
    } else {
      files.push(path);
      objects.push(...readManifest(path));
    }
  }
  for (const generator of kustomization.configMapGenerator ?? []) {
    for (const entry of generator.files ?? []) {
      const path = resolve(dir, entry.split('=').at(-1)!);
      if (!existsSync(path))
        throw new Error(`${relative(ROOT, dir)} generates from missing ${entry}`);
      files.push(path);
    }
  }
  return { dir, kustomization, files, objects };
}

/** Every document of a YAML file; a syntax error throws naming the file. */
export function readManifest(path: string): K8sObject[] {
  const documents = parseAllDocuments(readFileSync(path, 'utf8'));
  return documents.map((document) => {
    if (document.errors.length) {
      throw new Error(`${relative(ROOT, path)}: ${document.errors[0].message}`);
    }
    return {
      ...(document.toJS() as Omit<K8sObject, 'file'>),
      file: relative(KUBERNETES_DIR, path),
    };
  });
}

/** Every file under deploy/kubernetes. */
export function allFiles(dir = KUBERNETES_DIR): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? allFiles(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** Does every pair of `selector` appear in `labels`? */
export function selects(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

export function envValue(container: Container, name: string): EnvVar | undefined {
  return container.env?.find((variable) => variable.name === name);
}

import Dockerode from 'dockerode';
import { resolve } from 'node:path';
import type { AppConfig } from '../../src/config/app-config';
import { SnapshotImages } from '../../src/modules/workers/sandbox/backends/docker/docker-snapshot-image';
import type { SandboxExit, SandboxProcess } from '../../src/modules/workers/sandbox/sandbox.types';

/** The agent image the docker tests and benches open sandboxes of (built by BUILD_AGENT_IMAGE). */
export const AGENT_IMAGE = 'ambient-agent:bookworm';
export const BUILD_AGENT_IMAGE = resolve(
  __dirname,
  '..',
  '..',
  'sandbox',
  'agent-image',
  'build-image.sh',
);

type DockerSettings = AppConfig['sandbox']['docker'];

/** Sandbox settings of the docker backend as the tests use them: small limits, network none. */
export function dockerSandboxSettings(docker: Partial<DockerSettings> = {}): AppConfig['sandbox'] {
  return {
    backend: 'docker',
    network: 'none',
    memoryMb: 256,
    pids: 128,
    cpus: 1,
    maxMemoryMb: 1024,
    maxPids: 1024,
    maxCpus: 2,
    readonlyPaths: '',
    docker: {
      defaultImage: AGENT_IMAGE,
      user: '1000:1000',
      ...docker,
    },
  };
}

/**
 * Resolves once `stream` has printed something matching `pattern`; fails when the stream ends
 * without it, with what it printed.
 */
export function printed(stream: NodeJS.ReadableStream, pattern: RegExp): Promise<string> {
  return new Promise((resolvePrinted, reject) => {
    let text = '';
    const stop = (): void => {
      stream.off('data', onData);
      stream.off('end', onEnd);
    };
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('utf8');
      const match = pattern.exec(text);
      if (match) {
        stop();
        resolvePrinted(match[0]);
      }
    };
    const onEnd = (): void => {
      stop();
      reject(new Error(`the stream ended without printing ${pattern}: ${JSON.stringify(text)}`));
    };
    stream.on('data', onData);
    stream.on('end', onEnd);
  });
}

/** A docker sandbox's process once it has ended, with its output and how it was started. */
export interface FinishedProcess extends SandboxExit {
  stdout: string;
  stderr: string;
  startedBy: string | null;
}

/** How a docker process was started (DockerExecProcess.startedBy). */
export function startedBy(child: SandboxProcess): string | null {
  return (child as unknown as { startedBy: string | null }).startedBy;
}

/** Everything a stream gives until its end, as text. */
export function collect(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolveText) =>
    stream.on('end', () => resolveText(Buffer.concat(chunks).toString('utf8'))),
  );
}

/** Waits for the process's end and the end of both its outputs. */
export async function finishProcess(child: SandboxProcess): Promise<FinishedProcess> {
  const [stdout, stderr, exit] = await Promise.all([
    collect(child.stdout),
    collect(child.stderr),
    child.exited,
  ]);
  return { ...exit, stdout, stderr, startedBy: startedBy(child) };
}

/**
 * Removes a deployment's environment snapshot images (the `docker commit`s of its environments'
 * set-ups), once its containers are gone (an image a container uses cannot go): nothing else
 * removes them (a worker's sweep leaves an image younger than an hour), and a CI machine runs
 * many deployments. How many went; none when no Docker daemon answers.
 */
export async function removeSnapshotImagesOf(deployment: string): Promise<number> {
  const images = new SnapshotImages(new Dockerode(), deployment);
  let removed = 0;
  try {
    for (const image of await images.list()) if (await images.remove(image.tag)) removed++;
  } catch {
    // No daemon here: no image either.
  }
  return removed;
}

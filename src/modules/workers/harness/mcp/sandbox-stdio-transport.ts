import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Sandbox, SandboxProcess } from '../../sandbox/sandbox.types';

export interface SandboxStdioParams {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * The MCP stdio transport for a server started inside the execution's sandbox (the SDK's own
 * StdioClientTransport spawns on this host): JSON-RPC lines over the process's stdin/stdout.
 */
export class SandboxStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private proc?: SandboxProcess;
  private readonly buffer = new ReadBuffer();
  private stderrListener?: (chunk: Buffer) => void;

  constructor(
    private readonly sandbox: Sandbox,
    private readonly params: SandboxStdioParams,
  ) {}

  /** Receives what the server writes to stderr (set before `start`). */
  onStderr(listener: (chunk: Buffer) => void): void {
    this.stderrListener = listener;
  }

  start(): Promise<void> {
    if (this.proc) throw new Error('SandboxStdioTransport already started');
    const proc = this.sandbox.spawn(this.params.command, this.params.args, {
      env: this.params.env,
      stdin: 'pipe',
    });
    this.proc = proc;
    proc.stdout.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      this.drain();
    });
    proc.stdout.on('error', (err) => this.onerror?.(err));
    proc.stdin?.on('error', (err) => this.onerror?.(err));
    if (this.stderrListener) proc.stderr.on('data', this.stderrListener);
    else proc.stderr.resume();
    return new Promise((resolve, reject) => {
      void proc.exited.then((exit) => {
        if (exit.startError) {
          reject(exit.startError);
          this.onerror?.(exit.startError);
        }
        this.proc = undefined;
        this.onclose?.();
      });
      // Spawning is synchronous for every backend; a start failure settles `exited` at once.
      setImmediate(resolve);
    });
  }

  private drain(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (err) {
        this.onerror?.(err as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.proc?.stdin;
      if (!stdin) return reject(new Error('not connected'));
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  close(): Promise<void> {
    const proc = this.proc;
    this.proc = undefined;
    proc?.stdin?.end();
    proc?.kill();
    this.buffer.clear();
    return Promise.resolve();
  }
}

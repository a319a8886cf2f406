import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ErrorWatch } from './internalErrors.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A service process started like `npm start` (tests, bench and soak). */
export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  /** Everything the process wrote so far (stdout and stderr, from its first line: the start's own lines included). */
  output(): string;
  /** Where the output (stdout and stderr) ends now: pass it to `waitForOutput` to wait only for what comes later. */
  outputMark(): number;
  /** Resolves once the output after `from` matches `pattern` (a sentinel the process logs), or rejects after `ms`. */
  waitForOutput(pattern: RegExp, from: number, ms?: number): Promise<void>;
  stop(): Promise<void>;
  /** Declares that the running test makes this process log internal errors (see TestApp.expectInternalErrors). */
  expectInternalErrors(count?: number): void;
}

/**
 * Spawns `src/main.ts` (or another entry that prints "listening on <url>") on a free port with the given environment
 * (and node flags); resolves once it listens.
 */
export async function spawnService(env: Record<string, string>, nodeArgs: string[] = [], entry = 'src/main.ts'): Promise<ServiceProcess> {
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, '--import', '@swc-node/register/esm-register', entry], {
    cwd: ROOT,
    // No webhook dispatcher or embedding worker: on a shared database they would take work the tests time
    // themselves (pass WEBHOOK_DISPATCHER / EMBEDDINGS to override).
    env: { ...process.env, PORT: '0', OUTBOUND_ALLOW_LOOPBACK: 'true', WEBHOOK_DISPATCHER: 'off', EMBEDDINGS: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let output = '';
  let all = ''; // everything the process wrote (test processes are short-lived)
  // Its JSON log lines at error level and above fail the test they were logged in, unless declared.
  const watch = new ErrorWatch(`the service spawned from ${entry}`);
  let partial = '';
  const onOutput = (chunk: Buffer) => {
    const text = chunk.toString();
    all += text;
    const lines = (partial + text).split('\n');
    partial = lines.pop()!;
    for (const line of lines) watch.take(line);
  };
  child.stdout!.on('data', onOutput);
  child.stderr!.on('data', onOutput);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => reject(new Error(`service exited with ${code}:\n${output}`)));
  });
  return {
    url,
    child,
    exited,
    output: () => all,
    outputMark: () => all.length,
    waitForOutput: (pattern, from, ms = 15_000) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!pattern.test(all.slice(from))) return;
          done();
          resolve();
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no output matching ${pattern} within ${ms} ms:\n${all.slice(from).slice(-2000)}`));
        }, ms);
        const done = () => {
          clearTimeout(timer);
          child.stdout!.off('data', check);
          child.stderr!.off('data', check);
        };
        child.stdout!.on('data', check);
        child.stderr!.on('data', check);
        check();
      }),
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
    expectInternalErrors: (count) => watch.expect(count),
  };
}

/** A loopback port nothing listens on now (for a child's inspector, or a connection that must be refused). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

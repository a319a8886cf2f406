import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/wks.mjs', import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `bin/wks.mjs` as a child process (stdin not a terminal), without the caller's WKS_* variables. */
export function wks(args: string[], env: Record<string, string> = {}, stdin?: string): Promise<CliRun> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('WKS_')));
  const started = Date.now();
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...clean, ...env }, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr, ms: Date.now() - started });
      },
    );
    child.stdin?.end(stdin ?? '');
  });
}

import { existsSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The modules the spec worker runs; they import only each other and npm packages. */
const WORKER_MODULES = ['parse', 'render', 'expansion', 'rejection'];

/**
 * Where the spec worker finds its code as plain JavaScript: next to this file in a compiled build,
 * else the TypeScript sources transpiled once here (with swc, into node_modules/.cache, refreshed
 * when a source is newer). The worker never registers a module loader: a worker thread that
 * registers loader hooks after an earlier one was terminated can bring the whole process down.
 */
export function workerModuleUrl(): URL {
  const compiled = new URL('./parse.js', import.meta.url);
  if (existsSync(compiled)) return compiled;
  const sourceDir = fileURLToPath(new URL('.', import.meta.url));
  const outDir = fileURLToPath(new URL('../../node_modules/.cache/wks-spec-worker/', import.meta.url));
  mkdirSync(outDir, { recursive: true });
  const swc = createRequire(import.meta.url)('@swc/core') as typeof import('@swc/core');
  for (const name of WORKER_MODULES) {
    const source = join(sourceDir, `${name}.ts`);
    const target = join(outDir, `${name}.js`);
    if (existsSync(target) && statSync(target).mtimeMs >= statSync(source).mtimeMs) continue;
    const { code } = swc.transformFileSync(source, {
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
      module: { type: 'es6' },
      sourceMaps: 'inline',
    });
    // Written aside and renamed, so a process starting at the same moment never imports half a file.
    writeFileSync(`${target}.${process.pid}`, code);
    renameSync(`${target}.${process.pid}`, target);
  }
  return pathToFileURL(join(outDir, 'parse.js'));
}

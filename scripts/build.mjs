// `npm run build [-- --out-dir DIR]`: the production build. tsc compiles the service (tsconfig.build.json:
// src/, rest/, mikro-orm.config.ts and the operational scripts) to JavaScript with decorator metadata,
// then the files the code reads at run time (beside its own modules, and the review console's folder)
// are copied to the same places under the output, so dist/ runs on its own with package.json and
// node_modules beside it (the Docker image's layout).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Files found through `import.meta.url` at run time: worker entries (plain .mjs) and JSON beside the sources. */
const ASSET = /\.(mjs|cjs|json)$/;
/** GraphQL documents: src/webhooks/ reads the fragments at run time (the REST rows import their documents' compiled modules). */
const OPERATIONS = 'schema/operations';
/** Served as they are by src/app/console.ts: the review console's browser modules and style sheet (not compiled). */
const CONSOLE = 'console';

const flag = process.argv.indexOf('--out-dir');
const outDir = resolve(ROOT, flag > 0 ? process.argv[flag + 1] : 'dist');
if (ROOT.startsWith(outDir + sep) || outDir === resolve(ROOT)) {
  console.error(`refusing to build into ${outDir}: it holds the sources`);
  process.exit(2);
}

const started = Date.now();
rmSync(outDir, { recursive: true, force: true }); // no module of a deleted source may linger
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', outDir], { stdio: 'inherit' });
if (compiled.status !== 0) process.exit(compiled.status ?? 1);

let copied = 0;
/** Copies the files under `dir` (relative to the root) whose names match into the same place under outDir. */
function copyAssets(dir, pattern) {
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !pattern.test(entry.name)) continue;
    const from = join(entry.parentPath, entry.name);
    const to = join(outDir, relative(ROOT, from));
    mkdirSync(dirname(to), { recursive: true });
    cpSync(from, to);
    copied++;
  }
}
copyAssets('src', ASSET);
copyAssets('rest', ASSET);
copyAssets(OPERATIONS, /\.graphql$/);
copyAssets(CONSOLE, /\.(js|css)$/);
if (!existsSync(join(outDir, 'src/main.js'))) {
  console.error(`the build wrote no ${relative(ROOT, join(outDir, 'src/main.js'))}`);
  process.exit(1);
}
writeFileSync(join(outDir, 'build-info.json'), `${JSON.stringify({ builtAt: new Date().toISOString() })}\n`);
console.log(
  `built ${relative(ROOT, outDir) || outDir} in ${((Date.now() - started) / 1000).toFixed(1)} s (${copied} runtime files copied)`,
);

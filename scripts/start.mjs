// `npm start` (and start:cluster, embeddings:backfill): `node scripts/start.mjs [entry.ts] [args…]` runs the
// compiled entry from dist/ when `npm run build` made one, else the TypeScript source through the runtime
// compiler (@swc-node/register, a dev dependency). Same process either way, so signals reach the service.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { register } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const entry = process.argv[2] && !process.argv[2].startsWith('-') ? process.argv[2] : 'src/main.ts';
const compiled = join(ROOT, 'dist', entry.replace(/\.ts$/, '.js'));

process.setSourceMapsEnabled(true);
if (existsSync(compiled)) {
  warnIfStale();
  await import(pathToFileURL(compiled).href);
} else {
  try {
    import.meta.resolve('@swc-node/register/esm');
  } catch {
    console.error(
      `${entry}: dist/ has no build and the runtime compiler is not installed: run \`npm run build\` (or \`npm ci\` with dev dependencies).`,
    );
    process.exit(1);
  }
  // Registered from the project root with its tsconfig (decorator metadata), whatever the working directory.
  process.env.SWC_NODE_PROJECT ??= join(ROOT, 'tsconfig.json');
  register('@swc-node/register/esm', pathToFileURL(ROOT).href);
  await import(pathToFileURL(join(ROOT, entry)).href);
}

/** A build older than a source it was made from still starts, but says so (remove dist/ to run the sources). */
function warnIfStale() {
  let builtAt;
  try {
    builtAt = Date.parse(JSON.parse(readFileSync(join(ROOT, 'dist/build-info.json'), 'utf8')).builtAt);
  } catch {
    return;
  }
  for (const dir of ['src', 'rest', 'schema/operations', 'console']) {
    if (!existsSync(join(ROOT, dir))) continue; // an image holds the build alone
    for (const file of readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })) {
      const path = join(file.parentPath, file.name);
      if (!file.isFile() || statSync(path).mtimeMs <= builtAt) continue;
      console.warn(
        `npm start: running dist/, built before ${relative(ROOT, path)} changed: \`npm run build\` again, or remove dist/ to run the sources.`,
      );
      return;
    }
  }
}

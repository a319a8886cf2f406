#!/usr/bin/env node
// Launcher of the `wks` command line: runs the compiled CLI (dist/) when it exists, else the
// TypeScript sources through the same runtime compiler as `npm start` (@swc-node/register).
import { existsSync } from 'node:fs';
import { register } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = new URL('../', import.meta.url);
const compiled = new URL('dist/src/cli/main.js', root);
let entry = compiled;
if (!existsSync(fileURLToPath(compiled))) {
  // The project's tsconfig (decorator metadata), whatever the working directory.
  process.env.SWC_NODE_PROJECT ??= fileURLToPath(new URL('tsconfig.json', root));
  register('@swc-node/register/esm', pathToFileURL(fileURLToPath(root)).href);
  entry = new URL('src/cli/main.ts', root);
}
const { main } = await import(entry.href);
const code = await main(process.argv.slice(2));
// Pipes and files are written synchronously on Linux; exit without waiting for idle sockets.
process.exit(code);

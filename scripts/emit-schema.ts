/**
 * Writes the emitted SDL to schema/schema.graphql, then the typed documents generated from it and
 * schema/operations/*.graphql beside them (tests fail when either is stale).
 */
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { printSchema } from 'graphql';
import { buildAppSchema } from '../src/schema.js';
import { OPERATIONS_DIR, typedOperationFiles } from './typed-operations.js';

const path = new URL('../schema/schema.graphql', import.meta.url);
const sdl = `${printSchema(await buildAppSchema())}\n`;
writeFileSync(path, sdl);
console.log(`wrote ${path.pathname}`);

const files = await typedOperationFiles(sdl);
for (const [file, text] of files) writeFileSync(join(OPERATIONS_DIR, file), text);
// A document removed or renamed leaves no module behind.
for (const file of readdirSync(OPERATIONS_DIR).filter((f) => f.endsWith('.ts') && !files.has(f))) rmSync(join(OPERATIONS_DIR, file));
console.log(`wrote ${files.size} typed documents in ${OPERATIONS_DIR}`);

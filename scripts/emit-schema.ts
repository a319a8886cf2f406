/** Writes the emitted SDL to schema/schema.graphql (a test fails when the committed file is stale). */
import { writeFileSync } from 'node:fs';
import { printSchema } from 'graphql';
import { buildAppSchema } from '../src/schema.js';

const path = new URL('../schema/schema.graphql', import.meta.url);
writeFileSync(path, `${printSchema(await buildAppSchema())}\n`);
console.log(`wrote ${path.pathname}`);

/**
 * Prints the table of who may call each root operation, from the schema's declarations (`@Needs`):
 * docs/access.md holds it, and test/unit/accessTable.test.ts fails when the two differ.
 *   node --import @swc-node/register/esm-register scripts/access-table.ts
 */
import { accessTable } from '../src/auth/accessTable.js';
import { buildAppSchema } from '../src/schema.js';

process.stdout.write(accessTable(await buildAppSchema()));

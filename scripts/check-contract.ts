/**
 * Checks the served OpenAPI document the way tools see it (`npm run contract:check`, run by CI):
 * starts the service on a fresh embedded database, fetches /api/v1/openapi.json, lints it with
 * Spectral (`spectral:oas`) and Redocly (`recommended`) allowing no error and no warning, generates
 * a typed client with openapi-typescript and type-checks scripts/contract/client.ts against it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnService } from '../test/support/processes.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const GENERATED = join(ROOT, 'scripts/contract/generated');
const bin = (name: string) => join(ROOT, 'node_modules/.bin', name);

/** Runs a tool, echoing its output; returns its stdout, or throws with it. */
function run(label: string, file: string, args: string[]): string {
  process.stdout.write(`== ${label}\n`);
  try {
    const out = execFileSync(file, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return out;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    process.stdout.write(`${e.stdout ?? ''}${e.stderr ?? ''}`);
    throw new Error(`${label} failed`, { cause: error });
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'wks-contract-'));
const service = await spawnService({ DATA_DIR: dataDir });
const failures: string[] = [];
try {
  mkdirSync(GENERATED, { recursive: true });
  const documentPath = join(GENERATED, 'openapi.json');
  const res = await fetch(`${service.url}/api/v1/openapi.json`);
  writeFileSync(documentPath, await res.text());
  console.log(`fetched the served document (${res.status}) into scripts/contract/generated/openapi.json`);

  const ruleset = join(dataDir, 'spectral.yaml');
  writeFileSync(ruleset, 'extends: ["spectral:oas"]\n');
  const steps: [string, () => void][] = [
    [
      'Spectral (spectral:oas): no errors, no warnings',
      () => console.log(run('spectral', bin('spectral'), ['lint', '--ruleset', ruleset, '--fail-severity=warn', documentPath]).trim()),
    ],
    [
      'Redocly (recommended): no errors, no warnings',
      () => {
        const out = run('redocly', bin('redocly'), ['lint', '--format=json', documentPath]);
        const totals = (JSON.parse(out.slice(out.indexOf('{'))) as { totals: { errors: number; warnings: number } }).totals;
        console.log(`redocly: ${totals.errors} errors, ${totals.warnings} warnings`);
        if (totals.errors || totals.warnings) {
          console.log(run('redocly (details)', bin('redocly'), ['lint', '--format=stylish', documentPath]));
          throw new Error('redocly reported problems');
        }
      },
    ],
    [
      'openapi-typescript, then the typed client program type-checks',
      () => {
        run('openapi-typescript', bin('openapi-typescript'), [documentPath, '-o', join(GENERATED, 'api.d.ts')]);
        run('tsc scripts/contract', bin('tsc'), ['-p', 'scripts/contract/tsconfig.json']);
        console.log('client.ts type-checks against the generated client');
      },
    ],
  ];
  for (const [label, step] of steps) {
    try {
      step();
      console.log(`ok: ${label}`);
    } catch (error) {
      failures.push(`${label}: ${(error as Error).message}`);
    }
  }
} finally {
  await service.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
if (failures.length) {
  console.error(`contract check failed:\n- ${failures.join('\n- ')}`);
  process.exit(1);
}
console.log('contract check passed');

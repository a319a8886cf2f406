/** Command-line flags and environment of `npm run bench`, read once. */
import { randomBytes } from 'node:crypto';

const quick = process.argv.includes('--quick');
const large = process.argv.includes('--large');

/** The run's settings: seconds per measurement, rounds, search corpus size, chosen scenarios. */
export const OPTIONS = {
  quick,
  large,
  durationSeconds: Number(process.env.BENCH_DURATION ?? (quick ? 3 : 10)),
  rounds: Number(process.env.BENCH_ROUNDS ?? (quick ? 1 : 3)),
  searchArticles: large ? 100_000 : 10_000,
  /** `--only=1,note-put`: ids or old numbers; null runs everything. */
  only:
    process.argv
      .find((a) => a.startsWith('--only='))
      ?.slice(7)
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean) ?? null,
  /** BENCH_VARIANTS=note-put/update,note-put/update-koa-indexed: run only these variants of the chosen scenarios (null: all). */
  variants: process.env.BENCH_VARIANTS?.split(',').map((s) => s.trim()) ?? null,
  /** BENCH_PROFILE=<dir>: the service writes a V8 CPU profile there when it stops. */
  profileDir: process.env.BENCH_PROFILE,
  databaseUrl: process.env.DATABASE_URL,
  adminToken: `adm_bench_${randomBytes(8).toString('hex')}`,
};

/** Progress output, timestamped. */
export function log(msg: string): void {
  console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);
}

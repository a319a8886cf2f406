/**
 * `npm run bench`: starts the service (a child process, on DATABASE_URL or the embedded database),
 * seeds realistic data, and measures the scenarios of scripts/bench/scenarios.ts side by side in one
 * run, so the figures that matter are ratios that hold on a noisy machine. Prints a table and the
 * ratio lines, and writes bench-results/latest.json.
 *
 *   BENCH_DURATION=10  seconds per measurement (after a warm-up)   BENCH_ROUNDS=3  rounds (median kept)
 *   --large            search at 100k articles instead of 10k      --quick          3 s × 1 round
 *   --only=1,note-put  run only these scenarios, by id or old number (seeding is trimmed to what they need)
 *   BENCH_VARIANTS=note-put/update,note-put/update-koa-indexed   only these variants (ids as in latest.json)
 *   BENCH_PROFILE=dir  the service writes a V8 CPU profile (--cpu-prof) into dir when it stops
 */
import { runBench } from './bench/runner.js';

await runBench();
process.exit(0);

/**
 * `npm run start:cluster`: one service process per core (Node cluster) on a shared PostgreSQL.
 * Everything that must hold across processes (quotas, rate limits, idempotency keys, the webhook
 * and embedding queues) lives in PostgreSQL, so the workers need nothing from each other.
 */
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';

if (!process.env.DATABASE_URL) {
  console.error('start:cluster needs DATABASE_URL: the embedded database belongs to one process (use npm start).');
  process.exit(2);
}
if (cluster.isPrimary) {
  const workers = Number(process.env.WORKERS || availableParallelism());
  console.log(`starting ${workers} service processes`);
  for (let i = 0; i < workers; i++) cluster.fork();
  let stopping = false;
  cluster.on('exit', (worker, code) => {
    if (stopping) return;
    console.error(`process ${worker.process.pid} exited (${code}); starting another`);
    cluster.fork();
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      stopping = true;
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
    });
  }
} else {
  await import('../src/main.js');
}

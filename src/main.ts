import { startServer } from './server.js';

/** Entry point of `npm start`: configuration from the environment (see README). */
const server = await startServer({
  port: Number(process.env.PORT ?? 8080),
  databaseUrl: process.env.DATABASE_URL || undefined,
  dataDir: process.env.DATA_DIR || './data',
  adminToken: process.env.ADMIN_TOKEN || undefined,
  keyHashSecret: process.env.KEY_HASH_SECRET || undefined,
  rateLimit: { max: Number(process.env.RATE_LIMIT_MAX || 600), windowSeconds: Number(process.env.RATE_LIMIT_WINDOW_S || 60) },
});

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    server.logger.info({ signal }, 'shutting down');
    server.close().then(() => process.exit(0), (error) => {
      server.logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    });
  });
}

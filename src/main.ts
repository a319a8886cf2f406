import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger } from './app/logger.js';
import { publicUrlWarning } from './identity/resources.js';
import { optionsFromConfig, startServer } from './server.js';

/** The configuration, every setting checked at once: each bad value is named and the start stops (status 2). */
function configuration(): Config {
  try {
    return loadConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) console.error(problem);
    process.exit(2);
  }
}

const config = configuration();

let stopping = false;
/** Stops the service in order (requests in flight answered, then the database) and exits with `code`. */
function shutdown(code: number): void {
  if (stopping) return;
  stopping = true;
  server.close().then(
    () => process.exit(code),
    (error) => {
      server.logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    },
  );
}

/** Entry point of `npm start`: configuration from the environment (docs/configuration.md, src/config.ts). */
const server = await startServer({
  ...optionsFromConfig(config),
  logger: createLogger({ level: config.LOG_LEVEL }),
  // The embedded database's thread died and cannot be started again: exit non-zero so a supervisor restarts the service.
  onDatabaseFailure: () => shutdown(1),
});

// npm start listens on every interface (the server's default host), where anyone can send any Host header.
const unsetPublicUrl = publicUrlWarning(config.PUBLIC_URL, '0.0.0.0');
if (unsetPublicUrl) server.logger.warn(unsetPublicUrl);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (!stopping) server.logger.info({ signal }, 'shutting down');
    shutdown(0);
  });
}

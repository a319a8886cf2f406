import { positionals, type Command } from './command.js';
import { Progress } from './output.js';

const backfillCommand: Command = {
  name: 'embeddings backfill',
  summary:
    'Re-embeds existing articles, changelog entries and memory notes (of one workspace, or of all) with the configured embedder, ' +
    'with a progress bar and ETA.',
  notes:
    'Unlike the other commands this one works on the database directly, not through the service (the service has no endpoint ' +
    'for it): it runs the same code as `npm run embeddings:backfill`. With DATABASE_URL (or --database-url) it can run next to ' +
    'running services; on the embedded database (DATA_DIR, default ./data) stop the service first, since the embedded database ' +
    'belongs to one process. The embedder is chosen by EMBEDDINGS / EMBEDDINGS_URL as for the service. --url and --admin-token are not used.',
  options: {
    workspace: { type: 'string', value: '<id>', description: 'only this workspace (default: all)' },
    'database-url': { type: 'string', value: '<postgres://…>', env: 'DATABASE_URL', description: 'a real PostgreSQL' },
    'data-dir': { type: 'string', value: '<dir>', env: 'DATA_DIR', default: './data', description: 'the embedded database directory' },
  },
  async run(ctx) {
    positionals(ctx, backfillCommand, 0);
    const v = ctx.values as Record<string, string | undefined>;
    // Loaded only here: the ORM and the model are heavy, and no other command needs them.
    const { backfillEmbeddings } = await import('../app/embeddingBackfill.js');
    let progress: Progress | undefined;
    const result = await backfillEmbeddings({
      databaseUrl: v['database-url'] ?? (ctx.env.DATABASE_URL || undefined),
      dataDir: v['data-dir'] ?? (ctx.env.DATA_DIR || './data'),
      workspace: v.workspace ?? null,
      env: ctx.env,
      onQueued: (queued, pending, model) => {
        ctx.err.write(`queued ${queued} items (${pending} pending); embedding with ${model}\n`);
        progress = new Progress(ctx.err, 'embedding', pending);
      },
      onProgress: (done, pending) => progress?.update(done, pending),
    });
    progress?.finish(result.embedded);
    ctx.out(
      ctx.json
        ? JSON.stringify(result)
        : `embedded ${result.embedded} of ${result.queued} queued items with ${result.model} in ${result.seconds.toFixed(1)} s`,
    );
  },
};

export const EMBEDDINGS_COMMANDS: Command[] = [backfillCommand];

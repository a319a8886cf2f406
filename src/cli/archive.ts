import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { envelopeError, readJson, ServiceClient } from './client.js';
import { CliError, positionals, type Command } from './command.js';
import { bytes, Progress } from './output.js';

const FORMAT_NOTE =
  'The archive is a gzip stream of JSON lines, format "wks-archive" version 1 (docs/archives.md): a header, one ' +
  '{type, data} line per record and a trailer with per-type counts and a SHA-256 over everything before it.';

/** Counts bytes through a stream, reporting them to a progress indicator. */
function counter(progress: Progress): Transform {
  let n = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      n += chunk.length;
      progress.update(n);
      callback(null, chunk);
    },
  });
}

const exportCommand: Command = {
  name: 'export',
  summary: 'Downloads a whole workspace as an archive file (admin token), with progress.',
  args: '<workspace> <file>',
  notes: `${FORMAT_NOTE} The service writes the archive from one consistent snapshot, then streams it.`,
  options: {},
  async run(ctx) {
    const [workspace, file] = positionals(ctx, exportCommand, 2);
    const client = ServiceClient.from(ctx);
    const started = Date.now();
    const res = await client.request(`/admin/workspaces/${encodeURIComponent(workspace)}/export`, {
      headers: { authorization: `Bearer ${client.token()}` },
    });
    if (!res.ok || !res.body) throw envelopeError(res.status, await readJson(res));
    const progress = new Progress(ctx.err, 'export', Number(res.headers.get('content-length')) || 0, bytes);
    const partial = `${file}.partial`;
    try {
      await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), counter(progress), createWriteStream(partial));
      await rename(partial, file);
    } catch (error) {
      await rm(partial, { force: true });
      throw new CliError(`the download failed: ${(error as Error).message}`);
    }
    const size = (await stat(file)).size;
    progress.finish(size);
    const seconds = (Date.now() - started) / 1000;
    ctx.out(
      ctx.json
        ? JSON.stringify({ workspaceId: workspace, file, bytes: size, seconds })
        : `wrote ${file} (${bytes(size)}) in ${seconds.toFixed(1)} s`,
    );
  },
};

const importCommand: Command = {
  name: 'import',
  summary: 'Uploads an archive into a new workspace (or an existing empty one with --into); prints the workspace id.',
  args: '<file>',
  notes:
    `${FORMAT_NOTE} The service checks the whole archive (gzip, version, every record, counts, checksum) before writing ` +
    'anything, then writes it in one transaction: a damaged archive changes nothing. Ids are re-issued (so are upload URLs, and ' +
    'links to them in Markdown are rewritten); contents and timestamps are kept. Without --into a new workspace is created in ' +
    '--org (default: the organization the archive came from, when it exists on this service).',
  options: {
    into: { type: 'string', value: '<workspace>', description: 'an existing, empty workspace to import into' },
    org: { type: 'string', value: '<id>', description: 'organization of the new workspace' },
    name: { type: 'string', value: '<name>', description: "name of the new workspace (default: the archive's)" },
  },
  async run(ctx) {
    const [file] = positionals(ctx, importCommand, 1);
    const v = ctx.values as Record<string, string | undefined>;
    if (v.into && (v.org || v.name)) throw new CliError('--into imports into an existing workspace: it takes no --org or --name', 2);
    const size = await stat(file).then(
      (s) => s.size,
      () => {
        throw new CliError(`cannot read ${file}`, 2);
      },
    );
    const client = ServiceClient.from(ctx);
    const query = new URLSearchParams(Object.entries({ organization: v.org, name: v.name }).filter((e): e is [string, string] => !!e[1]));
    const path = v.into ? `/admin/workspaces/${encodeURIComponent(v.into)}/import` : `/admin/import${query.size ? `?${query}` : ''}`;
    const started = Date.now();
    const progress = new Progress(ctx.err, 'upload', size, bytes);
    const body = Readable.toWeb(createReadStream(file).pipe(counter(progress)));
    const res = await client.request(path, {
      method: 'POST',
      headers: { authorization: `Bearer ${client.token()}`, 'content-type': 'application/gzip', 'content-length': String(size) },
      body: body as ReadableStream,
      duplex: 'half',
    });
    progress.finish(size);
    const answer = (await readJson(res)) as { workspaceId: string; counts: Record<string, number> } | null;
    if (!res.ok || !answer) throw envelopeError(res.status, answer);
    const seconds = (Date.now() - started) / 1000;
    if (ctx.json) return ctx.out(JSON.stringify({ workspaceId: answer.workspaceId }));
    const counts =
      Object.entries(answer.counts)
        .map(([type, n]) => `${n} ${type}`)
        .join(', ') || 'no records';
    ctx.out(`imported into workspace ${answer.workspaceId} in ${seconds.toFixed(1)} s: ${counts}`);
  },
};

export const ARCHIVE_COMMANDS: Command[] = [exportCommand, importCommand];

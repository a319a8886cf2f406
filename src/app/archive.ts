/**
 * Admin-only workspace archives over plain HTTP (admin token):
 *   GET  /admin/workspaces/{id}/export   → the archive (application/gzip), written to a temp file first
 *   POST /admin/workspaces/{id}/import   → into an existing, empty workspace
 *   POST /admin/import[?organization=&name=] → into a new workspace (default: the archive's organization and name)
 * Imports are received into a temp file, checked whole, then written in one transaction (201 {workspaceId, counts}).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Context } from 'koa';
import { digestSecret, KEY_PREFIX, safeEqual } from '../auth/keys.js';
import type { Credentials } from '../auth/principal.js';
import type { RequestContext } from '../context.js';
import { freshEm } from '../db/orm.js';
import { DomainError, invalidField, NotFoundError, PermissionDeniedError, UnauthorizedError } from '../errors.js';
import { exportWorkspace, importWorkspace, type ImportTarget } from '../services/workspaceArchive.js';
import type { Middleware } from '../http/middleware.js';

const EXPORT = /^\/admin\/workspaces\/([^/]+)\/export$/;
const IMPORT_INTO = /^\/admin\/workspaces\/([^/]+)\/import$/;
/** Largest archive an import accepts (bytes as sent, i.e. compressed): ARCHIVE_MAX_BYTES, default 2 GiB. */
const maxBytes = () => Number(process.env.ARCHIVE_MAX_BYTES) || 2 * 1024 ** 3;

/** Only the admin token: 401 without a valid one, 403 for an agent key. */
function requireAdminToken(ctx: Context, credentials: Credentials): void {
  const match = /^Bearer +(\S+) *$/i.exec(ctx.get('authorization'));
  if (!match) throw new UnauthorizedError();
  if (match[1].startsWith(KEY_PREFIX)) throw new PermissionDeniedError([], 'This operation needs the admin token.');
  if (!safeEqual(digestSecret(credentials.serverSecret, match[1]), credentials.adminTokenDigest)) throw new UnauthorizedError();
}

/** Runs `work` with a private temp directory that is removed afterwards (or when the response is done). */
async function withTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'wks-archive-'));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function sendExport(ctx: Context, orm: MikroORM, workspaceId: string): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'wks-archive-'));
  const file = join(dir, 'archive.jsonl.gz');
  try {
    await exportWorkspace(freshEm(orm), workspaceId, file);
    const body = createReadStream(file);
    body.on('close', () => void rm(dir, { recursive: true, force: true }));
    ctx.status = 200;
    ctx.set('Content-Type', 'application/gzip');
    ctx.set('Content-Disposition', `attachment; filename="workspace-${workspaceId}.wks.jsonl.gz"`);
    ctx.length = (await stat(file)).size;
    ctx.body = body;
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Copies the request body to `file`, refusing it once it passes the cap. */
async function receive(ctx: Context, file: string): Promise<void> {
  const limit = maxBytes();
  if (Number(ctx.get('content-length') || 0) > limit) throw tooLarge(limit);
  let received = 0;
  const cap = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      received += chunk.length;
      callback(received > limit ? tooLarge(limit) : null, chunk);
    },
  });
  await pipeline(ctx.req, cap, createWriteStream(file));
  if (!received) throw invalidField('archive', 'the request body is empty');
}

const tooLarge = (limit: number) => new DomainError('payload_too_large', `The archive is larger than ${limit} bytes (ARCHIVE_MAX_BYTES).`);

async function receiveImport(ctx: Context, orm: MikroORM, target: ImportTarget): Promise<void> {
  const result = await withTempDir(async (dir) => {
    const file = join(dir, 'archive.jsonl.gz');
    await receive(ctx, file);
    // Only what the audit trail reads of a request context: the admin principal and the request id.
    const requestContext = {
      em: freshEm(orm),
      principal: { kind: 'admin' },
      requestId: ctx.state.requestId as string,
    } as unknown as RequestContext;
    return importWorkspace(requestContext, file, target);
  });
  ctx.status = 201;
  ctx.body = result;
}

/** The archive endpoints as one Koa middleware (see the module comment). */
export function workspaceArchive(orm: MikroORM, credentials: Credentials): Middleware {
  return async (ctx, next) => {
    if (!ctx.path.startsWith('/admin/')) return next();
    const exportMatch = EXPORT.exec(ctx.path);
    const intoMatch = IMPORT_INTO.exec(ctx.path);
    const isNew = ctx.path === '/admin/import';
    if (!exportMatch && !intoMatch && !isNew) return next();
    const allowed = exportMatch ? 'GET' : 'POST';
    if (ctx.method !== allowed) throw new DomainError('method_not_allowed', `Use ${allowed} on ${ctx.path}.`, null, { Allow: allowed });
    requireAdminToken(ctx, credentials);
    if (exportMatch) return sendExport(ctx, orm, workspaceOf(exportMatch[1]));
    if (intoMatch) return receiveImport(ctx, orm, { workspaceId: workspaceOf(intoMatch[1]) });
    const organization = typeof ctx.query.organization === 'string' ? ctx.query.organization : undefined;
    const name = typeof ctx.query.name === 'string' ? ctx.query.name : undefined;
    if (name !== undefined && (!name.trim() || name.length > 200)) throw invalidField('name', 'must be 1 to 200 characters');
    return receiveImport(ctx, orm, { organizationId: organization, name });
  };
}

/** The workspace segment of an admin path; one that is not valid percent-encoding names no workspace (404). */
function workspaceOf(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new NotFoundError('Workspace');
  }
}

/**
 * Admin-only workspace archives over plain HTTP (admin token):
 *   GET  /admin/workspaces/{id}/export   → the archive (application/gzip), written to a temp file first
 *   POST /admin/workspaces/{id}/import   → into an existing, empty workspace
 *   POST /admin/import[?organization=&name=] → into a new workspace (default: the archive's organization and name)
 * Imports are received into a temp file, checked whole, then written in one transaction (201 {workspaceId, counts}).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import type { Context } from 'koa';
import { workspaceNameIssue } from '../archive/recordRules.js';
import { digestSecret, KEY_PREFIX, safeEqual } from '../auth/keys.js';
import type { Credentials } from '../auth/principal.js';
import type { RequestContext } from '../context.js';
import { freshEm } from '../db/orm.js';
import { DomainError, invalidField, NotFoundError, PermissionDeniedError, UnauthorizedError } from '../errors.js';
import { exportWorkspace, importWorkspace, type ImportTarget } from '../archive/workspaceArchive.js';
import type { Middleware } from '../http/middleware.js';
import { readSetting } from '../config.js';

const EXPORT = /^\/admin\/workspaces\/([^/]+)\/export$/;
const IMPORT_INTO = /^\/admin\/workspaces\/([^/]+)\/import$/;
/** Largest archive an import accepts (bytes as sent, i.e. compressed): ARCHIVE_MAX_BYTES, default 2 GiB. */
const maxBytes = () => readSetting('ARCHIVE_MAX_BYTES');
/** How much of a body past the limit is read (and dropped) so the client, still sending, gets the 413 rather than a reset. */
const DRAIN_BYTES = 64 * 1024 * 1024;

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

/** Only what the services read of a request context here: the admin principal, the request id (audit) and an EntityManager. */
function adminContext(ctx: Context, orm: MikroORM): RequestContext {
  return { em: freshEm(orm), principal: { kind: 'admin' }, requestId: ctx.state.requestId as string } as unknown as RequestContext;
}

async function sendExport(ctx: Context, orm: MikroORM, workspaceId: string): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'wks-archive-'));
  const file = join(dir, 'archive.jsonl.gz');
  try {
    await exportWorkspace(adminContext(ctx, orm), workspaceId, file);
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

/**
 * Copies the request body to `file`, refusing it once it passes the cap: a declared length over
 * it at once (and the connection is closed), a streamed body once it does, after reading on (and
 * dropping) up to DRAIN_BYTES more, so a client still sending reads the 413 instead of a reset.
 */
async function receive(ctx: Context, file: string): Promise<void> {
  const limit = maxBytes();
  if (Number(ctx.get('content-length') || 0) > limit) throw tooLarge(limit, true);
  const out = createWriteStream(file);
  try {
    const body = await copyBody(ctx.req, out, limit);
    if (body.received > limit) throw tooLarge(limit, !body.ended);
    if (!body.received) throw invalidField('archive', 'the request body is empty');
  } finally {
    out.end();
    await finished(out).catch(() => undefined);
  }
}

/**
 * Writes the body to `out` until it passes `limit`, then drops the rest up to DRAIN_BYTES more;
 * the request is never destroyed (that would reset the connection before the answer is read).
 */
function copyBody(req: IncomingMessage, out: WriteStream, limit: number): Promise<{ received: number; ended: boolean }> {
  let received = 0;
  return new Promise((resolve, reject) => {
    const stop = (ended: boolean, error?: Error) => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      out.off('error', onError);
      req.pause();
      if (error) reject(error);
      else resolve({ received, ended });
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit + DRAIN_BYTES) stop(false);
      else if (received <= limit && !out.write(chunk)) {
        req.pause();
        out.once('drain', () => req.resume());
      }
    };
    const onEnd = () => stop(true);
    const onError = (error: Error) => stop(false, error);
    const onClose = () => stop(false, new Error('the client closed the connection before the body ended'));
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
    out.on('error', onError);
  });
}

const tooLarge = (limit: number, close: boolean) =>
  new DomainError(
    'payload_too_large',
    `The archive is larger than ${limit} bytes (ARCHIVE_MAX_BYTES).`,
    { limit },
    close ? { Connection: 'close' } : {},
  );

async function receiveImport(ctx: Context, orm: MikroORM, target: ImportTarget): Promise<void> {
  const result = await withTempDir(async (dir) => {
    const file = join(dir, 'archive.jsonl.gz');
    await receive(ctx, file);
    return importWorkspace(adminContext(ctx, orm), file, target);
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
    const nameIssue = name === undefined ? null : (workspaceNameIssue(name) ?? (name.trim() ? null : 'must not be blank'));
    if (nameIssue) throw invalidField('name', nameIssue);
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

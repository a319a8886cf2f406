import { Readable } from 'node:stream';
import type { MikroORM } from '@mikro-orm/postgresql';
import { freshEm } from '../db/orm.js';
import { NotFoundError } from '../errors.js';
import { headerValue } from '../http/headerValue.js';
import { findPublicUpload } from '../services/uploads.js';
import type { Middleware } from '../http/middleware.js';

/**
 * `GET /uploads/<id>.<ext>`: public (no key), immutable, served with the image's own type from the
 * database, streamed as its parts are read. Every path under `/uploads/` is this handler's: anything but a stored name (`..`,
 * encoded slashes, extra segments) is the same 404 envelope.
 */
export function publicUploads(orm: MikroORM): Middleware {
  return async (ctx, next) => {
    const match = /^\/uploads\/(.+)$/.exec(ctx.path);
    if (!match || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    const file = await findPublicUpload(freshEm(orm), match[1]);
    if (!file) throw new NotFoundError('Upload');
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Content-Security-Policy', "default-src 'none'");
    ctx.set('ETag', headerValue(`"${file.sha256}"`));
    ctx.type = file.contentType;
    // Sent as its parts are read (a megabyte per statement), never held whole.
    ctx.body = Readable.from(file.bytes(), { objectMode: false });
    ctx.length = file.size;
  };
}

import { createReadStream } from 'node:fs';
import { uploadValue } from './uploadValue.js';
import { unlink } from 'node:fs/promises';
import type { Context } from 'koa';
import { koaBody } from 'koa-body';
import { Upload } from 'graphql-upload-minimal';
import { InvalidRequestError } from '../src/errors.js';
import type { UploadDef } from './routeDefinition.js';

const bad = (message: string) => new InvalidRequestError(`file: ${message}`, [{ field: 'file', message, in: 'body' }]);

/**
 * Parses a multipart/form-data body with formidable (streamed to a temporary file and stopped at
 * the size cap, never buffered whole) and hands the one file to GraphQL as an `Upload`, the way a
 * GraphQL multipart request would. Returns the variable value and a cleanup for the temp file.
 */
export async function readMultipartFile(ctx: Context, def: UploadDef): Promise<{ value: Upload; cleanup(): Promise<void> }> {
  if (!ctx.is('multipart/form-data')) throw bad(`send multipart/form-data with the image in the "${def.field}" field`);
  const parse = koaBody({
    multipart: true,
    json: false,
    urlencoded: false,
    text: false,
    // The file's SHA-256 is computed as its parts arrive (hashing 10 MiB at once held the event loop ~25 ms).
    formidable: {
      hashAlgorithm: 'sha256',
      maxFileSize: def.maxBytes,
      maxFiles: 1,
      maxFields: 10,
      maxFieldsSize: 64 * 1024,
      allowEmptyFiles: true,
      minFileSize: 0,
    },
    onError: (error: Error) => {
      const what = `${error.message} ${String((error as { code?: unknown }).code)}`;
      throw /maxFileSize|options\.max.*FileSize|1009|1016/i.test(what)
        ? bad(`must be at most ${def.maxBytes} bytes (10 MiB)`)
        : /maxFiles|1015/i.test(what)
          ? bad('send exactly one file')
          : bad(`the multipart body could not be read (${error.message})`);
    },
  });
  await parse(ctx, () => Promise.resolve());
  const files = ctx.request.files ?? {};
  const others = Object.keys(files).filter((name) => name !== def.field);
  const entry = files[def.field];
  const cleanup = async () => {
    for (const list of Object.values(files)) for (const f of [list].flat()) await unlink(f.filepath).catch(() => undefined);
  };
  if (others.length || !entry || Array.isArray(entry)) {
    await cleanup();
    throw bad(
      others.length
        ? `unknown file field(s) ${others.join(', ')}; send the image as "${def.field}"`
        : `is required (multipart field "${def.field}")`,
    );
  }
  // The digest names the file in an Idempotency-Key's request hash: without it, other bytes would replay an answer.
  if (typeof entry.hash !== 'string' || !/^[0-9a-f]{64}$/.test(entry.hash)) {
    await cleanup();
    throw new Error('the multipart parser gave no SHA-256 of the file');
  }
  const upload = uploadValue({
    digest: entry.hash,
    filename: entry.originalFilename ?? 'upload',
    fieldName: def.field,
    mimetype: entry.mimetype ?? undefined,
    open: () => createReadStream(entry.filepath),
  });
  return { value: upload, cleanup };
}

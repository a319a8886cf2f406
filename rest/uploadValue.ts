import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Upload } from 'graphql-upload-minimal';

/** A file for a GraphQL `Upload` variable, carrying the SHA-256 of its bytes (the Idempotency-Key's request hash uses it). */
export type UploadValue = Upload & { digest: string };

/**
 * The `Upload` a GraphQL multipart request would give, built from a file a transport already
 * holds (a multipart temp file, or an agent tool's base64 argument): resolvers read it the same
 * way whichever door it came through.
 */
export function uploadValue(file: {
  bytes: Buffer;
  filename: string;
  fieldName: string;
  mimetype?: string;
  open(): Readable;
}): UploadValue {
  const upload = new Upload() as Upload & { resolve(file: unknown): void; digest: string };
  upload.digest = createHash('sha256').update(file.bytes).digest('hex');
  upload.resolve({
    filename: file.filename,
    fieldName: file.fieldName,
    mimetype: file.mimetype ?? 'application/octet-stream',
    encoding: '7bit',
    createReadStream: () => file.open(),
  });
  return upload;
}

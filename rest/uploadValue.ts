import { createHash } from 'node:crypto';
import { setImmediate } from 'node:timers/promises';
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
  /** The SHA-256 of the bytes, hex. */
  digest: string;
  filename: string;
  fieldName: string;
  mimetype?: string;
  open(): Readable;
}): UploadValue {
  const upload = new Upload() as Upload & { resolve(file: unknown): void; digest: string };
  upload.digest = file.digest;
  upload.resolve({
    filename: file.filename,
    fieldName: file.fieldName,
    mimetype: file.mimetype ?? 'application/octet-stream',
    encoding: '7bit',
    createReadStream: () => file.open(),
    sha256: file.digest, // the upload service's digest, so it does not hash the bytes again
  });
  return upload;
}

/** Bytes hashed at once held the event loop ~25 ms for 10 MiB: this hashes a MiB per turn of the loop. */
export async function sha256Hex(bytes: Buffer): Promise<string> {
  const hash = createHash('sha256');
  for (let at = 0; at < bytes.length; at += 2 ** 20) {
    if (at) await setImmediate();
    hash.update(bytes.subarray(at, at + 2 ** 20));
  }
  return hash.digest('hex');
}

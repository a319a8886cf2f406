import type { Context } from 'koa';

/** The raw body as text, refused (by the declared length, or while streaming) once it passes `limit` bytes. */
export async function readText(ctx: Context, limit: number, tooLarge: (limit: number) => Error): Promise<string> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

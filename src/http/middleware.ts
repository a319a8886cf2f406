import type { Context } from 'koa';

/** A Koa middleware whose `next` is typed (Koa's own resolves to `any`). */
export type Middleware = (ctx: Context, next: () => Promise<void>) => Promise<void>;

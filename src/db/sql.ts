import type { EntityManager } from '@mikro-orm/postgresql';

/** Runs raw SQL (`?` placeholders) inside the EntityManager's transaction, if it has one. */
export function sql<T = Record<string, any>>(em: EntityManager, text: string, params: unknown[] = []): Promise<T[]> {
  return em.getConnection().execute(text, params, 'all', em.getTransactionContext());
}

/** A text[] literal for `?::text[]`: knex would expand a JS array binding into a parameter list. */
export function pgArray(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
}

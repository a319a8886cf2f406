/** Statements on settings: values generated once and shared through the database. */
import { sql, type SqlTarget } from '../db/sql.js';

/** Inserts a setting unless it exists; the value inserted, or undefined when one was there already. */
export async function insertSettingIfAbsent(db: SqlTarget, key: string, value: string): Promise<string | undefined> {
  const inserted = await sql<{ value: string }>(
    db,
    'insert into settings (key, value) values (?, ?) on conflict (key) do nothing returning value',
    [key, value],
  );
  return inserted[0]?.value;
}

/** A setting's value. */
export async function readSetting(db: SqlTarget, key: string): Promise<string> {
  const rows = await sql<{ value: string }>(db, 'select value from settings where key = ?', [key]);
  return rows[0].value;
}

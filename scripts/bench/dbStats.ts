/**
 * What a run wrote into the database: WAL bytes (pg_stat_wal, the whole cluster) and rows inserted,
 * updated (HOT or not) and deleted per table (pg_stat_user_tables, the bench's database), read
 * before and after the run. A backend reports its counters at most once a second while busy and
 * within 10 s once idle, so the reading after a run waits for that (STATS_SETTLE_MS).
 */
import type pg from 'pg';

/** PostgreSQL's idle statistics interval (PGSTAT_IDLE_INTERVAL, 10 s) and a margin. */
export const STATS_SETTLE_MS = 10_500;

/** Counters of one table. */
export interface TableCounts {
  ins: number;
  upd: number;
  hot: number;
  del: number;
}

/** Cumulative counters at one moment. */
export interface DatabaseCounters {
  walBytes: number;
  tables: Map<string, TableCounts>;
}

/** The counters now. */
export async function readCounters(pool: pg.Pool): Promise<DatabaseCounters> {
  const { rows } = await pool.query<{ wal: string; relname: string | null; ins: string; upd: string; hot: string; del: string }>(
    `select (select wal_bytes from pg_stat_wal)::text as wal, t.relname, t.n_tup_ins::text as ins, t.n_tup_upd::text as upd,
            t.n_tup_hot_upd::text as hot, t.n_tup_del::text as del
       from (select 1) one left join pg_stat_user_tables t on true`,
  );
  const tables = new Map<string, TableCounts>();
  for (const r of rows)
    if (r.relname) tables.set(r.relname, { ins: Number(r.ins), upd: Number(r.upd), hot: Number(r.hot), del: Number(r.del) });
  return { walBytes: Number(rows[0]?.wal ?? 0), tables };
}

/** What was written between two readings: WAL bytes, and per table the rows (tables nothing was written to left out). */
export interface Written {
  walBytes: number;
  tables: Record<string, TableCounts>;
}

/** The difference of two readings. */
export function written(before: DatabaseCounters, after: DatabaseCounters): Written {
  const tables: Record<string, TableCounts> = {};
  for (const [name, a] of after.tables) {
    const b = before.tables.get(name) ?? { ins: 0, upd: 0, hot: 0, del: 0 };
    const d = { ins: a.ins - b.ins, upd: a.upd - b.upd, hot: a.hot - b.hot, del: a.del - b.del };
    if (d.ins || d.upd || d.del) tables[name] = d;
  }
  return { walBytes: after.walBytes - before.walBytes, tables };
}

/** Rows written (inserted + updated + deleted) in all tables. */
export const rowsWritten = (w: Written): number => Object.values(w.tables).reduce((n, t) => n + t.ins + t.upd + t.del, 0);

/** `WAL 9.1 KB/req, rows 4.00/req (memory_notes upd 1.00 (HOT 0.00), events ins 1.00)` for the note column. */
export function writtenText(w: Written, requests: number): string {
  const per = (n: number) => (n / requests).toFixed(2);
  const tables = Object.entries(w.tables)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, t]) => {
      const parts = [
        t.ins ? `ins ${per(t.ins)}` : '',
        t.upd ? `upd ${per(t.upd)} (HOT ${per(t.hot)})` : '',
        t.del ? `del ${per(t.del)}` : '',
      ];
      return `${name} ${parts.filter(Boolean).join(' ')}`;
    });
  return `WAL ${(w.walBytes / requests / 1024).toFixed(1)} KiB/req, rows ${per(rowsWritten(w))}/req (${tables.join(', ')})`;
}

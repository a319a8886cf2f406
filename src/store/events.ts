/** Statements on events: the row as services write it, the events a transaction queues, writes that record their events, and the reads of events. */
import type { EventSubscriber, TransactionEventArgs } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pgArray, sql, toPositional, type Params, type Row, type SqlTarget } from '../db/sql.js';
import { AuditEvent } from '../entities/AuditEvent.js';

/** The message id (for webhooks) and the writing transaction's id are the database's defaults. */
export const EVENT_COLUMNS =
  'organization_id, workspace_id, actor, agent_key_id, member_id, action, target_type, target_id, request_id, created_at, payload';
/** The placeholders of EVENT_COLUMNS (the action's and the payload's may be columns of a written row instead). */
export const EVENT_VALUES = (action = '?', payload = '?::jsonb') =>
  `?::uuid, ?::uuid, ?, ?::uuid, ?::uuid, ${action}, ?, ?, ?, ?, ${payload}`;

/** Where the action and the payload are among the values of EVENT_COLUMNS. */
const ACTION_AT = 5;
const PAYLOAD_AT = 10;

/** Rows queued in a transaction, written by eventWriter (a MikroORM subscriber) in one statement just before it commits. */
const queued = new WeakMap<EntityManager, unknown[][]>();

/** Queues one event row (values in EVENT_COLUMNS order) in the transaction of `em`. */
export function queueEvent(em: EntityManager, values: unknown[]): void {
  if (!em.isInTransaction()) throw new Error('an event needs the EntityManager of a transaction');
  const rows = queued.get(em) ?? [];
  queued.set(em, rows);
  rows.push(values);
}

/**
 * Hands the events queued in a nested transaction (a savepoint) to the enclosing one: MikroORM
 * runs commit hooks for the outermost transaction only, so they are written when that commits.
 */
export function handOverEvents(from: EntityManager, to: EntityManager): void {
  const rows = queued.get(from);
  if (!rows?.length) return;
  queued.delete(from);
  const into = queued.get(to) ?? [];
  queued.set(to, into);
  into.push(...rows);
}

/** Writes the events queued in a transaction, inside it, before COMMIT (one statement). */
export const eventWriter: EventSubscriber = {
  async beforeTransactionCommit({ em, transaction }: TransactionEventArgs) {
    const rows = queued.get(em as EntityManager);
    if (!rows?.length) return;
    queued.delete(em as EntityManager);
    await (em as EntityManager)
      .getConnection()
      .execute(
        `insert into events (${EVENT_COLUMNS}) values ${rows.map(() => `(${EVENT_VALUES()})`).join(', ')}`,
        rows.flat(),
        'run',
        transaction,
      );
  },
};

/** A write that records its events: see writeWithEvents. */
export interface EventedWrite {
  with?: string;
  write: string;
  actionColumn?: string;
  payloadColumn?: string;
  /** The columns of the written rows that the caller gets back (default: all; a payload need not travel back). */
  returning?: string;
  name?: string;
}

/**
 * Runs a write (`write`: a data-modifying statement with RETURNING, or a select of rows a
 * data-modifying CTE in `with` returned) and, in the same statement, inserts an event row for each
 * row it returns; resolves with those rows. `params` fill the `?` of `with`, then of `write` (or
 * their `:name` placeholders); `event` is the event's values in EVENT_COLUMNS order, its action
 * taken instead from the written row's `actionColumn` when given, and its payload from the row's
 * `payloadColumn` (jsonb) when given; `returning` names the columns resolved with (default all); `name` prepares
 * the statement once per connection (see `sql`).
 */
export function writeWithEvents<T = Row>(em: SqlTarget, statement: EventedWrite, params: Params, event: unknown[]): Promise<T[]> {
  const action = statement.actionColumn ? `written.${statement.actionColumn}` : undefined;
  const payload = statement.payloadColumn ? `written.${statement.payloadColumn}` : undefined;
  const values = event.filter((_, i) => !(action && i === ACTION_AT) && !(payload && i === PAYLOAD_AT));
  const write = bindWrite(statement, params);
  let text = texts.get(statement);
  if (text === undefined || text.with !== write.with || text.write !== write.write) {
    text = {
      with: write.with,
      write: write.write,
      text: `with ${write.with ? `${write.with},` : ''} written as (${write.write}),
     event as (insert into events (${EVENT_COLUMNS}) select ${EVENT_VALUES(action, payload)} from written)
     select ${statement.returning ?? '*'} from written`,
    };
    texts.set(statement, text);
  }
  return sql<T>(em, text.text, [...write.values, ...values], statement.name);
}

/**
 * The whole text of each write with events (fixed statements such as a note's PUT), built once:
 * the same string every time, so the text caches of `sql` find it by a hash V8 keeps on the string
 * instead of hashing kilobytes of a newly built one for every request.
 */
const texts = new WeakMap<EventedWrite, { with?: string; write: string; text: string }>();

/** The caller's part of a write with events with `?` placeholders and its values in order. */
function bindWrite(
  statement: { with?: string; write: string },
  params: Params,
): { with?: string; write: string; values: readonly unknown[] } {
  if (Array.isArray(params)) return { ...statement, values: params };
  const named = params as Readonly<Record<string, unknown>>;
  const withPart = statement.with ? toPositional(statement.with) : { text: undefined, names: [] };
  const writePart = toPositional(statement.write);
  const values = [...withPart.names, ...writePart.names].map((name) => {
    if (!(name in named)) throw new Error(`no value for :${name}`);
    return named[name];
  });
  return { with: withPart.text, write: writePart.text, values };
}

/** A workspace's newest `limit` events (without their payloads: see eventPayloads), newest first. */
export function latestWorkspaceEvents(em: EntityManager, workspaceId: string, limit: number): Promise<AuditEvent[]> {
  return em.find(AuditEvent, { workspaceId }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit });
}

/** The payloads of events by id (ids as text). */
export function eventPayloads(
  em: SqlTarget,
  ids: readonly (string | number)[],
): Promise<{ id: string; payload: Record<string, unknown> | null }[]> {
  return sql<{ id: string; payload: Record<string, unknown> | null }>(
    em,
    `select id::text as id, payload from events where id in (${ids.map(() => '?').join(', ')})`,
    ids,
  );
}

/** An event's whole row, if it exists. */
export async function eventRow(db: SqlTarget, id: string): Promise<Record<string, unknown> | undefined> {
  const [row] = await sql<Record<string, unknown>>(db, 'select * from events where id = ?', [id]);
  return row;
}

/** Takes the transaction-scoped advisory lock `lock` if it is free; whether it was. */
export async function tryTransactionLock(em: SqlTarget, lock: number): Promise<boolean> {
  const [row] = await sql<{ locked: boolean }>(em, 'select pg_try_advisory_xact_lock(?) as locked', [lock]);
  return row.locked;
}

/** A position in commit order: the writing transaction's id (as text) and the event's id. */
export interface EventPosition {
  xid: string;
  id: string;
}

/** The webhook fan-out's cursor. */
export async function readWebhookCursor(em: SqlTarget): Promise<EventPosition> {
  const [cursor] = await sql<{ last_xid: string; last_id: string }>(
    em,
    `select last_xid::text, last_id from event_cursors where name = 'webhooks'`,
  );
  return { xid: cursor.last_xid, id: cursor.last_id };
}

/** Moves the webhook fan-out's cursor. */
export async function advanceWebhookCursor(em: SqlTarget, to: EventPosition): Promise<void> {
  await sql(em, `update event_cursors set last_xid = ?::xid8, last_id = ? where name = 'webhooks'`, [to.xid, to.id]);
}

/**
 * SQL: an event of `events` past the cursor position (xid, id) in commit order, from a transaction
 * older than every one still running (its xid is below the snapshot's xmin), so no later commit can
 * add one behind it. The fan-out's two readers share it.
 */
const PAST_CURSOR = (xid: string, id: string) => `(xid, id) > (${xid}, ${id}) and xid < pg_snapshot_xmin(pg_current_snapshot())`;

/** The fan-out's cursor position, as scalar subqueries. */
const CURSOR_XID = `(select last_xid from event_cursors where name = 'webhooks')`;
const CURSOR_ID = `(select last_id from event_cursors where name = 'webhooks')`;

/**
 * The fan-out's common pass in one statement: under the transaction-scoped advisory lock `lock`,
 * the events past the cursor (as eventsPast reads them, at most `batch`); when no enabled webhook
 * of their organizations exists, the cursor moves past them, as the full pass would after finding
 * no subscription. `hooked`: some may have subscriptions, and nothing was moved (the full pass then
 * runs). One statement instead of a transaction of six: on the embedded database a transaction
 * has the one session to itself between its statements.
 */
export async function passEventsWithoutHooks(
  db: SqlTarget,
  lock: number,
  batch: number,
): Promise<{ locked: boolean; events: number; hooked: boolean }> {
  const [row] = await sql<{ locked: boolean; events: number; hooked: boolean }>(db, PASS_WITHOUT_HOOKS(batch), [lock]);
  return row;
}

/**
 * passEventsWithoutHooks's statement (its one parameter: the lock). The cursor is read as scalar
 * subqueries (parameters of the plan), not as a joined row: only then is the row comparison a
 * condition of the (xid, id) index scan; joined, every event since the first was read and filtered
 * (71 ms at 200,000 events, against 0.1 ms).
 */
export const PASS_WITHOUT_HOOKS = (batch: number) =>
  `with l as (select pg_try_advisory_xact_lock(?) as locked),
        e as (select id, xid, organization_id from events, l
               where l.locked and ${PAST_CURSOR(CURSOR_XID, CURSOR_ID)} order by xid, id limit ${batch}),
        h as (select exists (select 1 from webhooks w where w.enabled and w.organization_id in (select organization_id from e)) as hooked),
        last as (select xid, id from e order by xid desc, id desc limit 1),
        moved as (update event_cursors set last_xid = last.xid, last_id = last.id from last, h
                   where event_cursors.name = 'webhooks' and not h.hooked returning 1)
   select (select locked from l) as locked, (select count(*) from e)::int as events, (select hooked from h) as hooked`;

/** An event waiting to be fanned out. */
export interface FanOutEvent {
  id: string;
  /** The writing transaction's id as text (ordering is by the column, never by this text). */
  event_xid: string;
  message_id: string;
  organization_id: string | null;
  workspace_id: string | null;
  type: string;
  created_at: string;
  target_id: string | null;
}

/**
 * Up to `batch` events past `after` in commit order, only from transactions older than every one
 * still running (their xid is below the snapshot's xmin), so no later commit can add one behind.
 */
export function eventsPast(em: SqlTarget, after: EventPosition, batch: number): Promise<FanOutEvent[]> {
  return sql<FanOutEvent>(
    em,
    `select id, xid::text as event_xid, message_id, organization_id, workspace_id, action as type, created_at, target_id from events
          where ${PAST_CURSOR('?::xid8', '?::bigint')} order by events.xid, events.id limit ${batch}`,
    [after.xid, after.id],
  );
}

/** The event row's columns that a webhook's `data` carries. */
export interface EventColumns {
  message_id: string;
  action: string;
  created_at: string;
  organization_id: string | null;
  workspace_id: string | null;
  actor: string;
  agent_key_id: string | null;
  member_id: string | null;
  target_type: string;
  target_id: string | null;
  request_id: string | null;
  payload: Record<string, unknown> | null;
}

/** An event's columns for its webhook deliveries, if it exists. */
export async function eventForDelivery(em: SqlTarget, id: string): Promise<EventColumns | undefined> {
  const [row] = await sql<EventColumns>(
    em,
    `select message_id, action, created_at, organization_id, workspace_id, actor, agent_key_id, member_id, target_type, target_id, request_id, payload
       from events where id = ?`,
    [id],
  );
  return row;
}

/** An event as live subscribers read it, with the horizon it was read under (a row with a null id when none is new). */
export interface LiveEventRow {
  horizon: string;
  id: string | null;
  xid: string;
  workspaceId: string;
  action: string;
  targetType: string;
  targetId: string | null;
}

/**
 * The horizon (the current snapshot's xmin) and up to `batch` events of `workspaceIds` past `after`
 * in commit order, only from transactions below the horizon: one row with a null id when there are none.
 * Ordered by the columns themselves: their text (the names the select gives) would put xid 100000
 * before 99999, and a full batch's cursor could then skip events.
 */
export function liveEventsPast(db: SqlTarget, after: EventPosition, workspaceIds: string[], batch: number): Promise<LiveEventRow[]> {
  return sql<LiveEventRow>(
    db,
    `with horizon as (select pg_snapshot_xmin(pg_current_snapshot()) as xid)
         select horizon.xid::text as horizon, e.* from horizon left join lateral (
           select id::text as id, xid::text as xid, workspace_id as "workspaceId", action, target_type as "targetType", target_id as "targetId"
             from events
            where (xid, id) > (?::xid8, ?::bigint) and xid < horizon.xid and workspace_id = any(?::uuid[])
            order by events.xid, events.id limit ${batch}) e on true`,
    [after.xid, after.id, pgArray(workspaceIds)],
  );
}

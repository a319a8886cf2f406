import type { EntityClass } from '@mikro-orm/core';
import { acting } from '../auth/access.js';
import { ROLES } from '../auth/permissions.js';
import { MEMORY_QUOTA } from '../plans.js';
import type { RequestContext } from '../context.js';
import { ARTICLE_STATUSES } from '../entities/Article.js';
import { AgentKey, AuditEvent, Member, Organization, Workspace } from '../entities/index.js';
import { invalidField, NotFoundError } from '../errors.js';
import { isUuid } from '../ids.js';
import { encodeCursor } from '../pagination.js';
import { entitiesByIds } from '../store/entities.js';
import { keysetPositions, type KeysetList, type PageRow } from '../store/keysetPages.js';
import { workspaceUsageRow } from '../store/usage.js';
import type { Connection } from '../types/connection.js';
import type { WorkspaceUsage } from '../types/usage.js';

/** `first` / `after` of every admin connection. */
export interface PageArgs {
  first?: number | null;
  after?: string | null;
}

const FIRST = { minimum: 1, maximum: 100, default: 20 };

/** One keyset-paged list: its table and entity, the filters as SQL on that table, and the order of (created_at, id); `extra` columns go to `attach`. */
interface ListSpec<T> extends KeysetList {
  entity: EntityClass<T>;
  attach?: (node: T, row: PageRow) => void;
}

function checkFirst(first: number | null | undefined): number {
  if (first === null || first === undefined) return FIRST.default;
  if (!Number.isInteger(first) || first < FIRST.minimum || first > FIRST.maximum)
    throw invalidField('first', `must be an integer from ${FIRST.minimum} to ${FIRST.maximum}`);
  return first;
}

/** The (created_at, id) position an `after` cursor holds, or a 400 naming `after`. */
function decodeAfter(after: string, idType: 'uuid' | 'bigint'): [string, string] {
  try {
    const value: unknown = JSON.parse(Buffer.from(after, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === 'string')) {
      const [at, id] = value as [string, string];
      const idOk = idType === 'uuid' ? isUuid(id) : /^[0-9]{1,19}$/.test(id);
      if (idOk && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(at)) return [at, id];
    }
  } catch {
    // fall through to the 400
  }
  throw invalidField('after', 'is not a cursor returned by this list');
}

/** An optional id filter: absent, or a UUID (anything else is a 400 naming the field). */
function idFilter(field: string, value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  if (!isUuid(value)) throw invalidField(field, 'must be an id (UUID)');
  return value;
}

/**
 * A page of a list by keyset on (created_at, id): one statement for the count and the page's
 * positions, one for the entities. Rows inserted while a client pages through never shift a page.
 */
async function keysetPage<T extends object>(ctx: RequestContext, spec: ListSpec<T>, args: PageArgs): Promise<Connection<T>> {
  const size = checkFirst(args.first);
  const after = args.after ? decodeAfter(args.after, spec.idType) : null;
  const rows = await keysetPositions(ctx.em, spec, after, size + 1);
  const positions = rows.filter((r) => r.id !== null).slice(0, size);
  const nodes = positions.length
    ? await entitiesByIds(
        ctx.em,
        spec.entity,
        positions.map((r) => r.id!),
      )
    : [];
  const byId = new Map(nodes.map((n) => [String((n as unknown as { id: unknown }).id), n]));
  const edges = positions.flatMap((row) => {
    const node = byId.get(row.id!);
    if (!node) return []; // deleted between the two statements
    spec.attach?.(node, row);
    return [{ node, cursor: encodeCursor([row.at!, row.id!]) }];
  });
  const hasNextPage = rows.filter((r) => r.id !== null).length > size;
  return { edges, pageInfo: { hasNextPage, endCursor: edges.at(-1)?.cursor ?? null }, totalCount: rows[0]?.total ?? 0 };
}

/** Adds `column = ?` for each given filter value. */
function filters(pairs: [string, unknown][]): { where: string[]; params: unknown[] } {
  const given = pairs.filter(([, value]) => value !== null && value !== undefined);
  return { where: given.map(([column]) => column), params: given.map(([, value]) => value) };
}

/** Organizations, oldest first. */
export function listOrganizations(ctx: RequestContext, args: PageArgs): Promise<Connection<Organization>> {
  // A signed-in member sees their own organization only.
  const own = acting(ctx).organizationId;
  const f = filters([['id = ?::uuid', own]]);
  return keysetPage(ctx, { table: 'organizations', entity: Organization, idType: 'uuid', order: 'asc', ...f }, args);
}

/** Workspaces, oldest first, optionally of one organization. */
export function listWorkspaces(ctx: RequestContext, args: PageArgs & { organizationId?: string | null }): Promise<Connection<Workspace>> {
  const own = acting(ctx).organizationId;
  const f = filters([
    ['organization_id = ?::uuid', idFilter('organizationId', args.organizationId)],
    ['organization_id = ?::uuid', own],
  ]);
  return keysetPage(ctx, { table: 'workspaces', entity: Workspace, idType: 'uuid', order: 'asc', ...f }, args);
}

/** Members, oldest first, optionally of one organization and one role. */
export function listMembers(
  ctx: RequestContext,
  args: PageArgs & { organizationId?: string | null; role?: string | null },
): Promise<Connection<Member>> {
  const own = acting(ctx).organizationId;
  if (args.role != null && !(ROLES as readonly string[]).includes(args.role))
    throw invalidField('role', `must be one of ${ROLES.join(', ')}`);
  const f = filters([
    ['organization_id = ?::uuid', idFilter('organizationId', args.organizationId)],
    ['organization_id = ?::uuid', own],
    ['role = ?', args.role],
  ]);
  return keysetPage(ctx, { table: 'members', entity: Member, idType: 'uuid', order: 'asc', ...f }, args);
}

export interface AgentKeyFilters extends PageArgs {
  organizationId?: string | null;
  memberId?: string | null;
  workspaceId?: string | null;
  revoked?: boolean | null;
}

/** Agent keys, oldest first (never their secret or digest: the AgentKey type has neither). */
export function listAgentKeys(ctx: RequestContext, args: AgentKeyFilters): Promise<Connection<AgentKey>> {
  const own = acting(ctx).organizationId;
  const f = filters([
    ['organization_id = ?::uuid', idFilter('organizationId', args.organizationId)],
    ['organization_id = ?::uuid', own],
    ['member_id = ?::uuid', idFilter('memberId', args.memberId)],
    ['workspace_id = ?::uuid', idFilter('workspaceId', args.workspaceId)],
  ]);
  if (args.revoked === true) f.where.push('revoked_at is not null');
  if (args.revoked === false) f.where.push('revoked_at is null');
  return keysetPage(ctx, { table: 'agent_keys', entity: AgentKey, idType: 'uuid', order: 'asc', ...f }, args);
}

export interface AuditTrailFilters extends PageArgs {
  workspaceId?: string | null;
  actor?: string | null;
  action?: string | null;
  targetType?: string | null;
  targetId?: string | null;
  from?: Date | null;
  to?: Date | null;
}

const ACTORS = ['agent', 'member', 'oauth', 'admin'];

/** Audit events, newest first, filtered; `from` inclusive, `to` exclusive. */
export function listAuditTrail(ctx: RequestContext, args: AuditTrailFilters): Promise<Connection<AuditEvent>> {
  const own = acting(ctx).organizationId;
  if (args.actor != null && !ACTORS.includes(args.actor)) throw invalidField('actor', `must be one of ${ACTORS.join(', ')}`);
  if (args.from && args.to && args.from.getTime() > args.to.getTime()) throw invalidField('to', 'must not be before from');
  const f = filters([
    ['workspace_id = ?::uuid', idFilter('workspaceId', args.workspaceId)],
    ['organization_id = ?::uuid', own],
    ['actor = ?', args.actor],
    ['action = ?', args.action],
    ['target_type = ?', args.targetType],
    ['target_id = ?', args.targetId],
    ['created_at >= ?::timestamptz', args.from?.toISOString()],
    ['created_at < ?::timestamptz', args.to?.toISOString()],
  ]);
  return keysetPage(
    ctx,
    {
      table: 'events',
      entity: AuditEvent,
      idType: 'bigint',
      order: 'desc',
      ...f,
      extra: 'payload',
      attach: (event, row) => (event.payload = (row.payload as Record<string, unknown> | null) ?? null),
    },
    args,
  );
}

/** What one workspace uses, in one statement. */
export async function workspaceUsage(ctx: RequestContext, workspaceId: string): Promise<WorkspaceUsage> {
  if (!isUuid(workspaceId)) throw new NotFoundError('Workspace');
  const row = await workspaceUsageRow(ctx.em, workspaceId);
  if (!row?.plan) throw new NotFoundError('Workspace');
  const quota = MEMORY_QUOTA[row.plan];
  return {
    workspaceId,
    plan: row.plan,
    // The quota counter is what limited plans are held to; unlimited plans keep none.
    notesUsed: quota === null ? row.notes : (row.quota_used ?? row.notes),
    notesQuota: quota,
    uploadCount: row.upload_count,
    uploadBytes: Number(row.upload_bytes),
    articlesByStatus: ARTICLE_STATUSES.map((status) => ({ status, count: row.articles[status] ?? 0 })),
    searchesPerDay: row.searches,
  };
}

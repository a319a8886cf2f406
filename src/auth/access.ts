/**
 * Who may call an operation, declared once on its resolver (`@Needs`, in one of five forms), and
 * checked from that declaration alone: services never check access themselves.
 *
 * - `@Needs(permissions, { policies, adminMayAct })` — a caller of a workspace (a key, an OAuth grant,
 *   a signed-in person of its organization; the admin token where `adminMayAct`): `@Caller()` resolves
 *   its Scope (key, two-factor, workspace, permissions AND role ceiling) before the resolver runs.
 * - `@Needs.admin()` — the admin token only.
 * - `@Needs.person(action)` — a signed-in member whose role allows `action` (any member when null), in
 *   their own organization; or the admin token, anywhere.
 * - `@Needs.personIn(action, argument)` — the same in the workspace an argument names (404 for a
 *   workspace of another organization).
 * - `@Needs.member()` — a signed-in member only.
 *
 * The declaration travels in the GraphQL schema (field extensions): REST's route table, MCP and the
 * OpenAPI document read it (accessOf), `enforceAccess` checks every form but the workspace one before
 * the resolver runs, and the start fails for a root operation that declares nothing.
 */
import { GraphQLSchema, OperationTypeNode, type GraphQLFieldConfig, type GraphQLField, type GraphQLResolveInfo } from 'graphql';
import { createParameterDecorator, Extensions, type ResolverData } from 'type-graphql';
import { callerKind, type MemberPrincipal, type RequestContext } from '../context.js';
import { UnauthorizedError } from '../errors.js';
import { adminOrPerson, adminOrPersonIn, authorize, type Scope } from './authorize.js';
import { adminOnly, permitted, type PersonPolicy, type WorkspacePolicy } from './policies.js';
import type { Permission, PersonAction } from './permissions.js';

/**
 * A named policy an operation declares (auth/policies.ts): decided on the call's arguments before
 * the resolver runs when `fromArgs` gives its facts (publishing on create), else by the service
 * through the guard the resolver hands it (guardOf), where the facts are known.
 */
export interface DeclaredPolicy {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each declaration pairs a policy with its own facts
  policy: WorkspacePolicy<any>;
  fromArgs?: (args: Record<string, unknown>) => unknown;
}

/** A workspace operation: what every call needs (what REST, MCP and the OpenAPI document list), and the policies it declares. */
export interface WorkspaceAccess {
  form: 'workspace';
  permissions: readonly Permission[];
  policies: readonly DeclaredPolicy[];
  adminMayAct: boolean;
}

/** An operation's declared access. */
export type Access =
  | WorkspaceAccess
  | { form: 'admin' }
  | { form: 'person'; action: PersonAction | Permission | null; policies?: readonly PersonPolicy<unknown>[] }
  | { form: 'personIn'; action: PersonAction | Permission; argument: string }
  | { form: 'member' };

/** A method decorator carrying its access (subscriptions hand it to the streams they open). */
export type AccessDecorator = MethodDecorator & { access: Access };

const declare = (access: Access): AccessDecorator => Object.assign(Extensions({ access }), { access });

/**
 * Declares a workspace operation: the permissions it needs (all of them), the named policies that
 * guard it, and whether the admin token may act through it over GraphQL.
 */
export function Needs(
  permissions: readonly Permission[],
  options: { policies?: readonly (DeclaredPolicy | WorkspacePolicy<unknown>)[]; adminMayAct?: boolean } = {},
): AccessDecorator {
  const policies = (options.policies ?? []).map((p) => ('kind' in p ? { policy: p } : p));
  return declare({ form: 'workspace', permissions, policies, adminMayAct: options.adminMayAct ?? false });
}
/** The admin token only. */
Needs.admin = (): AccessDecorator => declare({ form: 'admin' });
/** A signed-in member whose role allows `action` (any member when null), in their organization; or the admin token; `policies` name rules its rows follow. */
Needs.person = (action: PersonAction | Permission | null, options: { policies?: readonly PersonPolicy<unknown>[] } = {}): AccessDecorator =>
  declare({ form: 'person', action, ...(options.policies ? { policies: options.policies } : {}) });
/** A signed-in member whose role allows `action` in the workspace the argument `argument` names; or the admin token. */
Needs.personIn = (action: PersonAction | Permission, argument: string): AccessDecorator => declare({ form: 'personIn', action, argument });
/** A signed-in member only. */
Needs.member = (): AccessDecorator => declare({ form: 'member' });

/** The access a schema field declares, if any. */
export function accessOf(
  field: Pick<GraphQLField<unknown, unknown> | GraphQLFieldConfig<unknown, unknown>, 'extensions'>,
): Access | undefined {
  return (field.extensions as { access?: Access } | null | undefined)?.access;
}

/**
 * Checks a caller against an access form other than the workspace one (those resolve a Scope:
 * `@Caller()`, or `checkWorkspaceAccess`): 401, 403 two-factor, 404 for another organization's
 * workspace, 403 naming what the role lacks.
 */
export async function checkAccess(ctx: RequestContext, access: Access, args: Record<string, unknown>): Promise<void> {
  switch (access.form) {
    case 'admin':
      return adminOnly(ctx);
    case 'person':
      return void adminOrPerson(ctx, access.action);
    case 'personIn':
      return adminOrPersonIn(ctx, String(args[access.argument]), access.action);
    case 'member':
      if (ctx.principal.kind !== 'member') throw new UnauthorizedError();
      return;
    case 'workspace':
      await checkWorkspaceAccess(ctx, access, args);
  }
}

/**
 * The caller's Scope in the workspace `args.workspace` names, authorized by a workspace access form.
 * A REST or MCP call has authorized it for its route before reading the body (`ctx.authorized`): that
 * Scope is used again, checked only for what the arguments add.
 */
export async function checkWorkspaceAccess(
  ctx: RequestContext,
  access: WorkspaceAccess,
  args: Record<string, unknown>,
  workspace = String(args.workspace),
): Promise<Scope> {
  const plus = access.policies.flatMap((d) => (d.fromArgs ? d.policy.needs(d.fromArgs(args)) : []));
  const policies = access.policies.map((d) => d.policy.name);
  const earlier = ctx.authorized as { workspace: string; scope: Scope } | undefined;
  if (earlier && earlier.workspace === workspace && access.permissions.every((p) => earlier.scope.permissions.has(p))) {
    permitted(earlier.scope.permissions, plus);
    return { ...earlier.scope, policies };
  }
  const scope = await authorize(ctx, workspace, plus.length ? [...access.permissions, ...plus] : access.permissions, {
    adminMayAct: access.adminMayAct,
  });
  return { ...scope, policies };
}

/** Who acts in an organization-level operation its declaration let through: a signed-in member, or the admin token (member null). */
export function acting(ctx: RequestContext): { organizationId: string | null; member: MemberPrincipal | null } {
  const p = ctx.principal;
  return p.kind === 'member' ? { organizationId: p.organizationId, member: p } : { organizationId: null, member: null };
}

/**
 * The `workspace: String!` argument of an operation, resolved to the caller's Scope in it,
 * authorized by the field's `@Needs` (401 → 403 two-factor → workspace 400/404 → 403 permission)
 * before the resolver body runs.
 */
export function Caller() {
  return createParameterDecorator<RequestContext>((data) => scopeIn(data, String(data.args.workspace)), {
    arg: { name: 'workspace', typeFunc: () => String },
  });
}

/** The caller's Scope in a workspace the operation names otherwise: an argument of an args class, or a field of its parent. */
export function CallerOf(workspaceOf: string | ((data: ResolverData<RequestContext>) => string)) {
  return createParameterDecorator<RequestContext>((data) =>
    scopeIn(data, typeof workspaceOf === 'string' ? String(data.args[workspaceOf]) : workspaceOf(data)),
  );
}

async function scopeIn(data: ResolverData<RequestContext>, workspace: string): Promise<Scope> {
  const access = declaredAccess(data.info);
  if (access.form !== 'workspace')
    throw new Error(`${data.info.parentType.name}.${data.info.fieldName} takes a scope but is not a workspace operation`);
  const scope = await checkWorkspaceAccess(data.context, access, data.args, workspace);
  // Every authorized workspace operation is counted by door and caller (who uses the workspace: agents or people).
  const { context } = data;
  const caller = callerKind(context.principal);
  const operation = data.info.operation.operation;
  if (caller && operation !== OperationTypeNode.SUBSCRIPTION)
    context.activity.count(scope.workspaceId, context.via, caller, operation === OperationTypeNode.QUERY ? 'read' : 'write');
  return scope;
}

function declaredAccess(info: GraphQLResolveInfo): Access {
  const access = accessOf(info.parentType.getFields()[info.fieldName]);
  if (!access) throw new Error(`${info.parentType.name}.${info.fieldName} takes a @Caller() scope but declares no @Needs`);
  return access;
}

/** Every root operation of the schema with its declared access (undefined: none), in schema order. */
export function rootAccess(schema: GraphQLSchema): { type: string; name: string; access: Access | undefined }[] {
  return [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].flatMap((type) =>
    type ? Object.values(type.getFields()).map((field) => ({ type: type.name, name: field.name, access: accessOf(field) })) : [],
  );
}

/**
 * Holds the schema to its declarations: the start fails for a root operation that declares no access,
 * and every query and mutation of a form other than the workspace one checks its caller before its
 * resolver runs (subscriptions check theirs when they open and before each event: see services/live.ts).
 */
export function enforceAccess(schema: GraphQLSchema): void {
  const undeclared = rootAccess(schema).filter((op) => !op.access);
  if (undeclared.length)
    throw new Error(`root operations declare no access (@Needs): ${undeclared.map((op) => `${op.type}.${op.name}`).join(', ')}`);
  for (const type of [schema.getQueryType(), schema.getMutationType()]) {
    for (const field of Object.values(type?.getFields() ?? {})) {
      const access = accessOf(field)!;
      const resolve = field.resolve;
      if (access.form === 'workspace' || !resolve) continue;
      field.resolve = async (source, args: Record<string, unknown>, context: RequestContext, info) => {
        await checkAccess(context, access, args);
        return resolve(source, args, context, info);
      };
    }
  }
}

export type { Scope };

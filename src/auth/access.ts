/**
 * What an operation needs, declared once on its resolver (`@Needs`): the permissions, and whether
 * the admin token may act in a workspace through it. The declaration travels in the GraphQL
 * schema (field extensions), where REST's route table, MCP and the OpenAPI document read it
 * (accessOf), and `@Caller()` authorizes by it before the resolver runs, handing the service its Scope.
 */
import { OperationTypeNode, type GraphQLFieldConfig, type GraphQLField, type GraphQLResolveInfo } from 'graphql';
import { createParameterDecorator, Extensions, type ResolverData } from 'type-graphql';
import { callerKind, type RequestContext } from '../context.js';
import { authorize, type Scope } from './authorize.js';
import type { Permission } from './permissions.js';

/** An operation's declared access. */
export interface Access {
  /** What every call needs (what REST, MCP and the OpenAPI document list). */
  permissions: readonly Permission[];
  /** What a call needs besides, by its arguments (publishing on create needs changelog.publish). */
  plus?: (args: Record<string, unknown>) => readonly Permission[];
  adminMayAct: boolean;
}

/** Declares the permissions an operation needs (all of them), and whether the admin token may act through it over GraphQL. */
export function Needs(permissions: readonly Permission[], options: Partial<Omit<Access, 'permissions'>> = {}): MethodDecorator {
  const access: Access = { permissions, plus: options.plus, adminMayAct: options.adminMayAct ?? false };
  return Extensions({ access });
}

/** The access a schema field declares, if any. */
export function accessOf(
  field: Pick<GraphQLField<unknown, unknown> | GraphQLFieldConfig<unknown, unknown>, 'extensions'>,
): Access | undefined {
  return (field.extensions as { access?: Access } | null | undefined)?.access;
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
  const permissions = access.plus ? [...access.permissions, ...access.plus(data.args)] : access.permissions;
  const scope = await authorize(data.context, workspace, permissions, { adminMayAct: access.adminMayAct });
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

export type { Scope };

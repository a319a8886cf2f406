/**
 * The policy module: every rule of who may do what, named, the ones that depend on state included.
 *
 * An operation's own permissions are declared on its resolver (`@Needs`, auth/access.ts) and
 * checked before it runs, by `permitted` below. A rule that depends on what the call would change
 * (the status an article moves to, the kind of proposal approved, whose session is reached) is a
 * named Policy here: the resolver declares it (`@Needs(…, { policies })`) and hands the service a
 * Guard bound to the caller (`guardOf`); the service reports the facts where it knows them, inside
 * its transaction, and the guard decides. Services hold no rule and name no permission.
 * docs/access.md is written from this table and the declarations (scripts/access-table.ts).
 */
import type { MemberPrincipal, RequestContext } from '../context.js';
import { PermissionDeniedError, UnauthorizedError } from '../errors.js';
import { roleMay, type Permission, type PersonAction } from './permissions.js';

/** 403 `permission_denied` naming every permission of `required` the caller lacks (the check behind every rule). */
export function permitted(permissions: ReadonlySet<Permission>, required: readonly Permission[]): void {
  const missing = required.filter((p) => !permissions.has(p));
  if (missing.length) throw new PermissionDeniedError(missing);
}

/** 403 naming every action (or permission) of `actions` a signed-in person's role does not allow. */
export function personMay(p: Pick<MemberPrincipal, 'role'>, ...actions: (PersonAction | Permission)[]): void {
  const missing = actions.filter((a) => !roleMay(p.role, a));
  if (missing.length) throw new PermissionDeniedError(missing, `Your role (${p.role}) does not allow: ${missing.join(', ')}.`);
}

/** Only the admin token passes; an agent key gets 403, no credential 401. */
export function adminOnly(ctx: Pick<RequestContext, 'principal'>): void {
  const p = ctx.principal;
  if (p.kind === 'anonymous' || p.kind === 'invalid') throw new UnauthorizedError();
  if (p.kind !== 'admin') throw new PermissionDeniedError([], 'This operation needs the admin token.');
}

/** A caller of a workspace operation, as a workspace policy judges it: the effective permissions. */
export interface WorkspaceCaller {
  permissions: ReadonlySet<Permission>;
  /** The policies its operation declares (a guard of another policy is a programming error). */
  policies?: readonly string[];
}

/** A rule on a workspace operation: the permissions a call needs, given the facts of what it changes. */
export interface WorkspacePolicy<F> {
  kind: 'workspace';
  name: string;
  /** The rule in words (docs/access.md). */
  rule: string;
  needs(facts: F): readonly Permission[];
}

/** A rule on an operation of people (sessions, keys): the action a signed-in member's role needs, given the facts; the admin token passes. */
export interface PersonPolicy<F> {
  kind: 'person';
  name: string;
  rule: string;
  needs(facts: F): PersonAction | null;
}

export type Policy<F> = WorkspacePolicy<F> | PersonPolicy<F>;

/** What a service is handed to apply its operation's policy: it reports the facts, the guard throws 403 when they need more. */
export type Guard<F> = (facts: F) => void;

/** The same for a policy that narrows what an answer shows instead of refusing: whether the caller may, given the facts. */
export type Permit<F> = (facts: F) => boolean;

/** The facts of an article's update: whether it changes the status. */
export interface StatusChange {
  statusChanges: boolean;
}

/** The facts of a changelog write: whether it publishes (creates a published entry, changes the status, or moves a published entry's time). */
export interface Publishing {
  publishes: boolean;
}

/** The facts of an approval: the kind of proposal. */
export interface ProposalKind {
  kind: 'edit' | 'new';
}

/** The facts of reaching a session, a member's sessions or their connected apps: whether they are the caller's own. */
export interface Ownership {
  own: boolean;
}

/** The facts of a changelog list: whether drafts are asked for. */
export interface DraftsAsked {
  drafts: boolean;
}

/** The facts of a fetch: the kind of document its id names (null: none; the service refuses the id). */
export interface DocumentKindNamed {
  kind: 'article' | 'note' | 'changelog' | null;
}

/** The facts of a note's PUT: whether it created the note and near-duplicates would be named. */
export interface SimilarShown {
  similar: boolean;
}

const workspacePolicy = <F>(name: string, rule: string, needs: (facts: F) => readonly Permission[]): WorkspacePolicy<F> => ({
  kind: 'workspace',
  name,
  rule,
  needs,
});
const personPolicy = <F>(name: string, rule: string, needs: (facts: F) => PersonAction | null): PersonPolicy<F> => ({
  kind: 'person',
  name,
  rule,
  needs,
});

/** Every named rule that depends on state. */
export const POLICIES = {
  articleStatus: workspacePolicy<StatusChange>(
    'article.status',
    "Changing an article's status needs `article.update` and `article.publish`.",
    (f) => (f.statusChanges ? ['article.update', 'article.publish'] : []),
  ),
  changelogPublish: workspacePolicy<Publishing>(
    'changelog.publish',
    "Publishing a changelog entry — creating it published, changing its status, or moving a published entry's publication time — " +
      'needs `changelog.publish`.',
    (f) => (f.publishes ? ['changelog.publish'] : []),
  ),
  proposalApproval: workspacePolicy<ProposalKind>(
    'proposal.approve',
    'Approving a proposal is reviewing: an edit needs `article.update`; a new draft also creates an article, so it needs `article.create` ' +
      'and `article.update`.',
    (f) => (f.kind === 'edit' ? ['article.update'] : ['article.create', 'article.update']),
  ),
  changelogDrafts: workspacePolicy<DraftsAsked>(
    'changelog.drafts',
    'Drafts are listed (`drafts=true`) only to a caller with `changelog.update`; to another the list is the published entries.',
    (f) => (f.drafts ? ['changelog.update'] : []),
  ),
  similarNotes: workspacePolicy<SimilarShown>(
    'memory.similar',
    'A PUT that creates a note names near-duplicate notes (their paths tell what they say) only to a caller with `memory.read`.',
    (f) => (f.similar ? ['memory.read'] : []),
  ),
  documentRead: workspacePolicy<DocumentKindNamed>(
    'document.read',
    'Fetching a document by id needs what reads its kind: `article.read` for an article, `memory.read` for a memory note, `changelog.read` ' +
      'for a changelog entry.',
    (f) =>
      f.kind === 'article' ? ['article.read'] : f.kind === 'note' ? ['memory.read'] : f.kind === 'changelog' ? ['changelog.read'] : [],
  ),
  othersGrants: personPolicy<Ownership>(
    'grants.others',
    "A member lists and revokes their own connected apps (OAuth grants); other members' need `sessions.manage` (the admin token reaches all).",
    (f) => (f.own ? null : 'sessions.manage'),
  ),
  othersSessions: personPolicy<Ownership>(
    'sessions.others',
    "A member reaches their own sessions; another member's need `sessions.manage` (the admin token reaches all).",
    (f) => (f.own ? null : 'sessions.manage'),
  ),
} as const;

/** A guard applying a workspace policy to a caller (which must have declared it). */
export function guardOf<F>(policy: WorkspacePolicy<F>, caller: WorkspaceCaller): Guard<F> {
  if (caller.policies && !caller.policies.includes(policy.name))
    throw new Error(`the operation does not declare the policy ${policy.name}`);
  return (facts) => permitted(caller.permissions, policy.needs(facts));
}

/** A permit of a workspace policy for a caller (which must have declared it): whether the facts need nothing it lacks. */
export function permitOf<F>(policy: WorkspacePolicy<F>, caller: WorkspaceCaller): Permit<F> {
  if (caller.policies && !caller.policies.includes(policy.name))
    throw new Error(`the operation does not declare the policy ${policy.name}`);
  return (facts) => policy.needs(facts).every((p) => caller.permissions.has(p));
}

/** A permit of a person policy for the request's caller: the admin token always; a member when their role allows what it needs. */
export function personPermitOf<F>(policy: PersonPolicy<F>, ctx: Pick<RequestContext, 'principal'>): Permit<F> {
  return (facts) => {
    const action = policy.needs(facts);
    const p = ctx.principal;
    return action === null || p.kind === 'admin' || (p.kind === 'member' && roleMay(p.role, action));
  };
}

/** A guard applying a person policy to the request's caller: a member's role must allow what it needs; the admin token passes. */
export function personGuardOf<F>(policy: PersonPolicy<F>, ctx: Pick<RequestContext, 'principal'>): Guard<F> {
  return (facts) => {
    const action = policy.needs(facts);
    if (action === null) return;
    const p = ctx.principal;
    if (p.kind === 'member') personMay(p, action);
    else adminOnly(ctx);
  };
}

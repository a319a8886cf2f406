import type { AgentPrincipal } from '../src/context.js';

/** How long a check made for one change is kept for the other streams that receive it. */
export const SHARED_CHECK_MS = 2_000;

/**
 * Checks that the open change streams of one process share for one change. A change reaches every
 * stream that watches it at once, and each must judge its caller again as the credential stands
 * after the change: a stream asks with the change's id (`occasion`), and the streams of the same
 * credential (the credential's check) or of the same reader (the read's verdict) that receive the
 * same change get the answer of the first one that asked. A check starts after the change was
 * committed, so every stream that receives it is judged as things stood after it; a later change
 * has another id and is judged anew. Without an occasion nothing is shared.
 */
export class SharedChecks {
  private readonly pending = new Map<string, Promise<unknown>>();

  get size(): number {
    return this.pending.size;
  }

  /** `work`'s answer, shared with every caller of the same `key` for the same `occasion`. */
  once<T>(occasion: string | undefined, key: string, work: () => Promise<T>): Promise<T> {
    if (occasion === undefined) return work();
    const id = `${occasion}\u0000${key}`;
    const known = this.pending.get(id) as Promise<T> | undefined;
    if (known) return known;
    const answer = work();
    this.pending.set(id, answer);
    const forget = () => void setTimeout(() => this.pending.delete(id), SHARED_CHECK_MS).unref();
    answer.then(forget, forget);
    return answer;
  }
}

/**
 * Who an agent reads as: everything a read depends on (organization, member, role, permissions,
 * the workspace it is bound to, two-factor state, plan, an OAuth token's client and audience) but
 * not which of the member's keys it holds. Two credentials with the same reader may read the same
 * things.
 */
export function readerAs(principal: AgentPrincipal): string {
  let reader = readers.get(principal);
  if (reader === undefined) readers.set(principal, (reader = readerNow(principal)));
  return reader;
}

/** Each principal's reader, made once (the streams of one credential share the principal of a check). */
const readers = new WeakMap<AgentPrincipal, string>();

function readerNow(principal: AgentPrincipal): string {
  return JSON.stringify([
    principal.organizationId,
    principal.memberId,
    principal.role,
    [...principal.permissions].sort(),
    principal.boundWorkspaceId,
    principal.plan,
    principal.requireTwoFactor,
    principal.twoFactorEnabled,
    principal.oauth?.clientId ?? null,
    principal.oauth?.resource ?? null,
  ]);
}

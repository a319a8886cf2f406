import type { EntityManager } from '@mikro-orm/postgresql';
import type { SqlTarget } from './db/sql.js';
import type { Role } from './roles.js';
import type { Plan } from './plans.js';
import type { Embedder } from './search/embedder.js';
import type { VectorIndex } from './search/vectors.js';
import type { FullTextIndexes } from './search/fullText.js';
import type { LiveHub } from './live/hub.js';

/** MEMORY_HISTORY_KEPT, MEMORY_NEAR_DUPLICATES and MEMORY_EMBEDDINGS (docs/configuration.md). */
export interface MemorySettings {
  historyKept: number;
  nearDuplicates: boolean;
  /** Notes are queued for embedding when written (semantic and hybrid memory search). */
  embeddings: boolean;
  /** Where reads of notes are recorded (their access time, written apart from the read: services/noteAccess.ts). */
  access?: NoteAccessRecorder;
}

/** Gathers reads of notes: the latest per note, written to the primary apart from the read. */
export interface NoteAccessRecorder {
  /** Records a read of a note whose stored access time is `stored`; answers the access time the read shows. */
  touch(noteId: number, workspaceId: string, stored: Date, now?: Date): Date;
}

/** An authenticated agent key, with what authorization needs already loaded. */
export interface AgentPrincipal {
  kind: 'agent';
  keyId: string;
  keyName: string;
  permissions: readonly string[];
  boundWorkspaceId: string | null;
  memberId: string;
  role: Role;
  twoFactorEnabled: boolean;
  organizationId: string;
  plan: Plan;
  requireTwoFactor: boolean;
  /**
   * Set when the caller holds an OAuth access token rather than a key: `keyId` is then the grant's
   * id and `permissions` its scopes; the grant's client and the resource (audience) it is bound to.
   */
  oauth?: { grantId: string; clientId: string; resource: string };
}

/**
 * A person signed in to the console or GraphQL with a session cookie (src/identity/sessions.ts): a
 * member, who may do what their role's column of the role table says, in their organization only.
 */
export interface MemberPrincipal {
  kind: 'member';
  sessionId: string;
  memberId: string;
  email: string;
  role: Role;
  organizationId: string;
  plan: Plan;
  requireTwoFactor: boolean;
  /** The sign-in proved a second factor (an identity provider's `amr`); a sign-in link never does. */
  mfa: boolean;
}

/** Who is calling: nobody, a bad credential, the admin token, an agent key, or a signed-in member. */
export type Principal = { kind: 'anonymous' } | { kind: 'invalid' } | { kind: 'admin' } | AgentPrincipal | MemberPrincipal;

/** The doors a request comes through, as analytics split them: REST, MCP, GraphQL (dashboards, explorers), the review console. */
export const DOORS = ['rest', 'mcp', 'graphql', 'console'] as const;
export type Door = (typeof DOORS)[number];

/** The kinds of caller analytics split by: agents (a key, or an app with an OAuth grant), people (members), the admin token. */
export const CALLER_KINDS = ['agent_key', 'oauth_grant', 'member', 'admin_token'] as const;
export type CallerKind = (typeof CALLER_KINDS)[number];

/** The kind of an authenticated caller (null for nobody or a bad credential). */
export function callerKind(p: Principal): CallerKind | null {
  if (p.kind === 'agent') return p.oauth ? 'oauth_grant' : 'agent_key';
  if (p.kind === 'member') return 'member';
  return p.kind === 'admin' ? 'admin_token' : null;
}

/** Counts a workspace's operations by door and caller (see services/activity.ts). */
export interface ActivityCounter {
  count(workspaceId: string, door: Door, caller: CallerKind, kind: 'read' | 'write'): void;
}

/**
 * The narrow ports a request reaches search through: the embedder's model and inference, the
 * vector store's three reads, the term indexes' one (the objects themselves are the app's, made
 * once at start).
 */
export interface SearchPorts {
  embedder: Pick<Embedder, 'model' | 'embed'>;
  index: Pick<VectorIndex, 'nearest' | 'pending' | 'meanVectors'>;
  fullText: Pick<FullTextIndexes, 'index'>;
}

/** What a subscription asks of the live hub: a lease per subscription, and a stream of the workspace's committed events. */
export type LivePort = Pick<LiveHub, 'acquire' | 'release' | 'subscribe'>;

/** Per-request state shared by every resolver and service; one forked EntityManager per request. */
export interface RequestContext {
  /** The request's own EntityManager (forked on first use): entities, transactions. */
  em: EntityManager;
  /**
   * For `sql()` statements that run alone (autocommit) and need no EntityManager of their own:
   * one shared fork that never holds entities or a transaction. Hot read and single-statement
   * write paths use it, so they do not pay for a fork.
   */
  db: SqlTarget;
  principal: Principal;
  requestId: string;
  /** HMAC key for agent-key digests (new keys are stored under it). */
  serverSecret: string;
  /** Search: what a search asks of the embedder and the vector store (semantic) and of the workspaces' term indexes (full text). */
  search: SearchPorts;
  /** Outbound HTTP policy (OUTBOUND_ALLOW_LOOPBACK, for tests and local development only). */
  outbound: { allowLoopback: boolean };
  /** Memory notes: revisions kept per note (0: no history) and whether creates look for near-duplicates. */
  memory: MemorySettings;
  /**
   * Response headers a service sets for the answer (e.g. the sidebar tree's ETag): REST sends
   * them with the route's answer, GraphQL over HTTP with a one-field operation's.
   */
  responseHeaders: Record<string, string>;
  /** The door the request came through: GraphQL (HTTP or WebSocket) or REST/MCP (which run GraphQL in process). */
  door: 'graphql' | 'rest';
  /** The door as analytics split it (REST and MCP apart, the console apart from other GraphQL clients). */
  via: Door;
  /** Where the request's workspace operations are counted (reads and writes by door and caller). */
  activity: ActivityCounter;
  /**
   * The workspace a REST or MCP call authorized for its route before reading its body, with the
   * Scope it resolved (a `Scope` of auth/authorize.ts): the operation's own check uses it again.
   */
  authorized?: { workspace: string; scope: unknown };
  /** Live updates: leases and streams of committed events for this process's GraphQL subscriptions. */
  live: LivePort;
  /**
   * The caller as its credential resolves now: a subscription asks before each delivery, so a
   * revoked or expired key, or one whose permissions or member role changed, is judged anew (a
   * plain request: the principal it started with).
   */
  currentPrincipal(): Promise<Principal>;
  /**
   * Workspaces the admin token acts in during this request (workspace id → its organization id),
   * so the events it records carry their organization like an agent key's (webhooks select by it).
   */
  adminActing: Map<string, string>;
  /** People's sessions: how long one may stay idle, and the public origin sign-in links name (PUBLIC_URL), if set. */
  sessions: { idleSeconds: number; publicUrl?: string };
  /** This service's origin as its links name it: PUBLIC_URL, else the request's own scheme and host ('' when neither is known). */
  origin: string;
  /** Documents as connectors read them (the `fetch` tool): at most `maxChars` characters of text per answer (FETCH_MAX_CHARS). */
  documents: { maxChars: number };
}

import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { WebSocket, WebSocketServer } from 'ws';
import { blockedByTwoFactor, personBlockedByTwoFactor } from '../auth/authorize.js';
import type { KeyCache } from '../auth/keyCache.js';
import type { AgentPrincipal, MemberPrincipal, Principal } from '../context.js';
import type { SocketLeases } from '../live/socketLeases.js';
import type { RateLimiter } from '../rateLimit.js';
import { defaultOf } from '../config.js';

/** Limits of GraphQL over WebSocket (the WS_* settings, docs/configuration.md). */
export interface SocketLimits {
  /** Sockets of this process, of every kind (WS_MAX_CONNECTIONS); past it a new socket is closed with 1013. */
  maxConnections: number;
  /** Open sockets of one agent key, across every process (WS_SOCKETS_PER_KEY). */
  perKey: number;
  /** Open sockets of the agent keys of one organization, across every process (WS_SOCKETS_PER_ORG). */
  perOrganization: number;
  /** Sockets of one client address that are not through connection_init yet, in this process (WS_UNAUTHENTICATED_PER_ADDRESS). */
  unauthenticatedPerAddress: number;
  /** New sockets one client address may open per second, in bursts of twice as many, in this process (WS_NEW_PER_ADDRESS_PER_S). */
  newPerAddressPerSecond: number;
  /** How long a new socket may take to send connection_init (WS_INIT_TIMEOUT_MS); then it is closed with 4408. */
  initTimeoutMs: number;
  /** How often open sockets' credentials are judged again besides on every authentication change (WS_RECHECK_MS). */
  recheckMs: number;
}

/** The defaults of the WS_* settings. */
export const DEFAULT_SOCKET_LIMITS: SocketLimits = {
  maxConnections: defaultOf('WS_MAX_CONNECTIONS'),
  perKey: defaultOf('WS_SOCKETS_PER_KEY'),
  perOrganization: defaultOf('WS_SOCKETS_PER_ORG'),
  unauthenticatedPerAddress: defaultOf('WS_UNAUTHENTICATED_PER_ADDRESS'),
  newPerAddressPerSecond: defaultOf('WS_NEW_PER_ADDRESS_PER_S'),
  initTimeoutMs: defaultOf('WS_INIT_TIMEOUT_MS'),
  recheckMs: defaultOf('WS_RECHECK_MS'),
};

/** Close codes of refusals: 1013 try again later (a cap), 4403 forbidden (the credential), 4429 the key's rate limit. */
const CLOSE_TRY_LATER = 1013;
const CLOSE_FORBIDDEN = 4403;
const CLOSE_RATE_LIMITED = 4429;
/** A socket the server closed gets this long to answer the close before it is cut off (ws would wait 30 s). */
const CLOSE_GRACE_MS = 1000;

/** An authenticated socket: how to judge it again, and the slot it holds. */
interface Admitted {
  header: string | undefined;
  /** What the credential resolved to when the socket was admitted; any change closes the socket. */
  fingerprint: string;
  agent: AgentPrincipal | null;
  lease: string | null;
  /** A signed-in person's socket (their session cookie): closed once the session ends or changes. */
  person?: boolean;
}

interface GuardOptions {
  limits: SocketLimits;
  leases: SocketLeases;
  limiter: RateLimiter;
  keyCache: KeyCache;
  logger: Logger;
  /** Resolves a credential as it stands now. */
  resolve(header: string | undefined): Promise<Principal>;
  /** The client address of an upgrade request: the peer's, or the one a trusted proxy names (TRUST_PROXY). */
  addressOf(request: IncomingMessage): string;
}

/**
 * Who may hold a WebSocket, and for how long. Per process: a client address may open
 * newPerAddressPerSecond sockets a second (past it the upgrade is refused with HTTP 429, before any
 * WebSocket exists: a reconnecting flood costs little), every socket counts against maxConnections,
 * and sockets that have not sent connection_init count against their client address's budget
 * (past it, the oldest that has still sent nothing makes way). At connection_init:
 * the credential must resolve (4403), its organization's two-factor rule must allow it (4403), the
 * init is charged to the key's rate limit (4429), and a key's sockets are capped per key and per
 * organization across every process (1013, lease rows). Admitted sockets are judged again whenever
 * authentication changes anywhere (the key cache is emptied) and every recheckMs: a socket whose
 * credential no longer resolves, or resolves differently (revoked, expired, role, permissions,
 * plan, two-factor), is closed with 4403.
 */
export class SocketGuard {
  /** Sockets not through connection_init yet, by client address, oldest first. */
  private readonly unauthenticated = new Map<string, Set<WebSocket>>();
  private readonly addresses = new WeakMap<WebSocket, string>();
  /** New sockets each client address may still open now (a token bucket per address; full ones are forgotten). */
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  /** Sockets that have sent connection_init (no longer idle: never made to give way). */
  private readonly initiated = new WeakSet<WebSocket>();
  private readonly admitted = new Map<WebSocket, Admitted>();
  private readonly localCounts = new Map<string, number>();
  /** Sockets seen closing by the previous sweep: still closing at the next one, they are cut off. */
  private closing = new WeakSet<WebSocket>();
  private readonly timers: NodeJS.Timeout[];
  private readonly offInvalidate: () => void;
  private judging: Promise<void> | null = null;
  private judgeAgain = false;
  private wss: WebSocketServer | null = null;

  constructor(private readonly options: GuardOptions) {
    this.timers = [
      setInterval(() => void this.rejudge(), options.limits.recheckMs).unref(),
      setInterval(() => this.cutOffClosing(), CLOSE_GRACE_MS).unref(),
    ];
    this.offInvalidate = options.keyCache.onInvalidate(() => void this.rejudge());
  }

  /** Counts of this process's sockets (tests). */
  get stats(): { open: number; unauthenticated: number; admitted: number } {
    let unauthenticated = 0;
    for (const set of this.unauthenticated.values()) unauthenticated += set.size;
    return { open: this.wss?.clients.size ?? 0, unauthenticated, admitted: this.admitted.size };
  }

  /** ws's verifyClient: an upgrade within its address's rate goes on; past it, HTTP 429 with Retry-After. */
  readonly verifyClient = (
    info: { req: IncomingMessage },
    done: (verified: boolean, code?: number, message?: string, headers?: Record<string, string>) => void,
  ): void => {
    const address = this.options.addressOf(info.req);
    const rate = this.options.limits.newPerAddressPerSecond;
    const now = Date.now();
    const bucket = this.buckets.get(address) ?? { tokens: 2 * rate, at: now };
    bucket.tokens = Math.min(2 * rate, bucket.tokens + ((now - bucket.at) * rate) / 1000);
    bucket.at = now;
    this.buckets.set(address, bucket);
    if (bucket.tokens < 1) return done(false, 429, 'Too many new connections from this address', { 'Retry-After': '1' });
    bucket.tokens -= 1;
    done(true);
  };

  /** Judges new sockets of `wss` before anything else hears of them (call before graphql-ws's useServer). */
  watch(wss: WebSocketServer): void {
    this.wss = wss;
    wss.on('connection', (socket: WebSocket, request: IncomingMessage) => this.opened(socket, request));
  }

  /**
   * graphql-ws logs every socket error with console.error and its stack, a client's oversized
   * message (1009) included: any client could flood the log. Call after graphql-ws's useServer:
   * its listener is replaced by a debug line (ws closes the socket itself).
   */
  quietSocketErrors(wss: WebSocketServer): void {
    wss.on('connection', (socket: WebSocket) => {
      socket.removeAllListeners('error');
      socket.on('error', (err) => this.options.logger.debug({ err }, 'WebSocket error'));
    });
  }

  /** Sockets of this process that are open (those being closed are on their way out: they count for at most CLOSE_GRACE_MS more). */
  private openSockets(): number {
    let n = 0;
    for (const socket of this.wss?.clients ?? []) if (socket.readyState === socket.OPEN) n++;
    return n;
  }

  private opened(socket: WebSocket, request: IncomingMessage): void {
    const max = this.options.limits.maxConnections;
    // Counting open sockets walks them all: only once the total, closing ones included, is past the cap.
    if (this.wss && this.wss.clients.size > max && this.openSockets() > max)
      return shut(socket, CLOSE_TRY_LATER, 'Too many connections; try again later');
    // The client's address as every per-address decision reads it (TRUST_PROXY).
    const address = this.options.addressOf(request);
    let waiting = this.unauthenticated.get(address);
    if (!waiting) this.unauthenticated.set(address, (waiting = new Set()));
    if (waiting.size >= this.options.limits.unauthenticatedPerAddress) {
      // The oldest socket that has still sent nothing makes way: a real client sends connection_init at once.
      const idle = [...waiting].find((s) => !this.initiated.has(s));
      if (!idle) return shut(socket, CLOSE_TRY_LATER, 'Too many unauthenticated connections from this address');
      waiting.delete(idle);
      shut(idle, CLOSE_TRY_LATER, 'Too many unauthenticated connections from this address');
    }
    waiting.add(socket);
    this.addresses.set(socket, address);
    socket.once('close', () => {
      this.leaveWaiting(socket);
      this.forget(socket);
    });
  }

  private leaveWaiting(socket: WebSocket): void {
    const address = this.addresses.get(socket);
    const waiting = address === undefined ? undefined : this.unauthenticated.get(address);
    if (!waiting?.delete(socket) || waiting.size) return;
    this.unauthenticated.delete(address!);
  }

  /**
   * Judges connection_init: resolves with the caller once the socket is admitted, or closes it
   * (with the code and reason of the refusal) and resolves with null.
   */
  async admit(socket: WebSocket, header: string | undefined): Promise<Principal | null> {
    this.initiated.add(socket);
    // A socket refused when it opened (or closed since) may still deliver its connection_init: never admit it.
    if (socket.readyState !== socket.OPEN) return null;
    const stamp = this.options.keyCache.stamp;
    try {
      const principal = await this.options.resolve(header);
      if (socket.readyState !== socket.OPEN) return null;
      const refusal =
        principal.kind === 'agent' ? await this.admitAgent(socket, principal, header) : this.admitOther(socket, principal, header);
      if (refusal) {
        shut(socket, refusal[0], refusal[1]);
        return null;
      }
      this.leaveWaiting(socket);
      // Authentication changed while this one was judged: a pass that ran meanwhile may not have seen it.
      if (this.options.keyCache.stamp !== stamp) void this.rejudge();
      return principal;
    } catch (error) {
      this.options.logger.warn({ err: error }, 'could not judge a WebSocket connection_init');
      shut(socket, CLOSE_TRY_LATER, 'Service unavailable; try again later');
      return null;
    }
  }

  private admitOther(socket: WebSocket, principal: Principal, header: string | undefined): [number, string] | null {
    if (principal.kind === 'member') {
      if (personBlockedByTwoFactor(principal)) return [CLOSE_FORBIDDEN, 'Forbidden: two-factor authentication required'];
      this.admitted.set(socket, { header, fingerprint: personFingerprint(principal), agent: null, lease: null, person: true });
      return null;
    }
    if (principal.kind !== 'admin') return [CLOSE_FORBIDDEN, 'Forbidden: no valid credential'];
    this.admitted.set(socket, { header, fingerprint: 'admin', agent: null, lease: null });
    return null;
  }

  private async admitAgent(socket: WebSocket, agent: AgentPrincipal, header: string | undefined): Promise<[number, string] | null> {
    const { limiter, limits, leases } = this.options;
    if (blockedByTwoFactor(agent)) return [CLOSE_FORBIDDEN, 'Forbidden: two-factor authentication required'];
    // connection_init is a request like any other: charged to the key's rate limit.
    const charge = await limiter.hit(agent.keyId);
    if (!charge.allowed) return [CLOSE_RATE_LIMITED, `Rate limit exceeded; retry in ${charge.resetSeconds} s`];
    // This process's own count settles most refusals without a database round trip.
    if ((this.localCounts.get(`key:${agent.keyId}`) ?? 0) >= limits.perKey) return capRefusal('key', limits.perKey);
    if ((this.localCounts.get(`org:${agent.organizationId}`) ?? 0) >= limits.perOrganization)
      return capRefusal('organization', limits.perOrganization);
    const lease = await leases.acquire(agent.keyId, agent.organizationId, limits);
    if ('refused' in lease) return capRefusal(lease.refused, lease.limit);
    if (socket.readyState !== socket.OPEN) {
      await leases.release(lease.id); // it closed while its slot was being taken
      return [CLOSE_TRY_LATER, 'Closed during connection_init'];
    }
    this.admitted.set(socket, { header, fingerprint: fingerprint(agent), agent, lease: lease.id });
    this.count(agent, 1);
    return null;
  }

  private count(agent: AgentPrincipal, delta: number): void {
    for (const name of [`key:${agent.keyId}`, `org:${agent.organizationId}`]) {
      const n = (this.localCounts.get(name) ?? 0) + delta;
      if (n > 0) this.localCounts.set(name, n);
      else this.localCounts.delete(name);
    }
  }

  private forget(socket: WebSocket): void {
    const admitted = this.admitted.get(socket);
    if (!admitted) return;
    this.admitted.delete(socket);
    if (admitted.agent) this.count(admitted.agent, -1);
    if (admitted.lease) void this.options.leases.release(admitted.lease);
  }

  /** Judges every admitted key socket again now (coalesced: a change during a pass runs one more pass after it). */
  rejudge(): Promise<void> {
    if (this.judging) {
      this.judgeAgain = true;
      return this.judging;
    }
    this.judging = this.judgeAll()
      .catch((err: unknown) => this.options.logger.warn({ err }, 'could not judge open WebSockets again; retrying at the next pass'))
      .finally(() => {
        this.judging = null;
        if (this.judgeAgain) {
          this.judgeAgain = false;
          void this.rejudge();
        }
      });
    return this.judging;
  }

  private async judgeAll(): Promise<void> {
    // One resolution per credential, however many sockets share it (from the key cache when it holds the key).
    const byHeader = new Map<string | undefined, [WebSocket, Admitted][]>();
    for (const entry of this.admitted) {
      if (!entry[1].agent && !entry[1].person) continue;
      const group = byHeader.get(entry[1].header);
      if (group) group.push(entry);
      else byHeader.set(entry[1].header, [entry]);
    }
    for (const [header, sockets] of byHeader) {
      const now = await this.options.resolve(header);
      for (const [socket, admitted] of sockets) {
        const reason = verdict(now, admitted);
        if (reason && this.admitted.has(socket)) {
          this.forget(socket);
          shut(socket, CLOSE_FORBIDDEN, reason);
        }
      }
    }
  }

  /**
   * Every CLOSE_GRACE_MS: sockets still closing since the last pass (a close graphql-ws sent,
   * unanswered) are cut off, and addresses whose bucket has filled up again are forgotten.
   */
  private cutOffClosing(): void {
    const now = Date.now();
    const rate = this.options.limits.newPerAddressPerSecond;
    for (const [address, bucket] of this.buckets)
      if (bucket.tokens + ((now - bucket.at) * rate) / 1000 >= 2 * rate) this.buckets.delete(address);
    const closing = new WeakSet<WebSocket>();
    for (const socket of this.wss?.clients ?? []) {
      if (socket.readyState !== socket.CLOSING) continue;
      if (this.closing.has(socket)) socket.terminate();
      else closing.add(socket);
    }
    this.closing = closing;
  }

  /** Stops judging (shutdown; the sockets are closed by their server). */
  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.offInvalidate();
    await this.judging;
  }
}

/** Why an admitted socket must close now that its credential resolves to `now`, or null. */
function verdict(now: Principal, admitted: Admitted): string | null {
  if (admitted.person) {
    if (now.kind !== 'member') return 'Forbidden: the session was revoked or has expired';
    if (personBlockedByTwoFactor(now)) return 'Forbidden: two-factor authentication required';
    return personFingerprint(now) === admitted.fingerprint ? null : 'Forbidden: the session changed; connect again';
  }
  if (now.kind !== 'agent') return 'Forbidden: the credential was revoked or has expired';
  if (blockedByTwoFactor(now)) return 'Forbidden: two-factor authentication required';
  if (fingerprint(now) !== admitted.fingerprint) return 'Forbidden: the credential changed; connect again';
  return null;
}

/** What a session resolves to, as one string: every field authorization reads. */
function personFingerprint(p: MemberPrincipal): string {
  return JSON.stringify([p.sessionId, p.memberId, p.role, p.organizationId, p.plan, p.requireTwoFactor, p.mfa]);
}

/** What a key resolves to, as one string: every field authorization reads. */
function fingerprint(agent: AgentPrincipal): string {
  return JSON.stringify([
    agent.keyId,
    agent.permissions,
    agent.boundWorkspaceId,
    agent.memberId,
    agent.role,
    agent.twoFactorEnabled,
    agent.organizationId,
    agent.plan,
    agent.requireTwoFactor,
  ]);
}

function capRefusal(cap: 'key' | 'organization', limit: number): [number, string] {
  return [CLOSE_TRY_LATER, `Too many open sockets for this ${cap} (limit ${limit}); try again later`];
}

/** Closes a socket, and cuts it off if it does not answer within CLOSE_GRACE_MS. */
function shut(socket: WebSocket, code: number, reason: string): void {
  socket.close(code, reason);
  const cutOff = setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
  socket.once('close', () => clearTimeout(cutOff));
}

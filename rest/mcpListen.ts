/**
 * Change notices for MCP clients: `notifications/resources/updated` (and the list-changed notices)
 * for articles and memory notes, within about a second of a change made through any door by any
 * process — the live hub (src/live/hub.ts) reads committed events from the database, which every
 * process writes.
 *
 * - 2026-07-28: `subscriptions/listen` is a request answered by a stream. The filter's resource
 *   URIs are kept only where the caller may read them (the acknowledgement says which), at most
 *   MAX_LISTEN_URIS; each stream is served by its own handler of the SDK, fed by this caller's
 *   changes, and ends with the empty result when the service drains or the credential stops being
 *   valid.
 * - 2025-11-25: `resources/subscribe` stores the subscription with the credential (this server
 *   keeps no session), and the client's GET /mcp stream, on whatever process it lands, delivers
 *   the credential's subscriptions.
 *
 * Every stream holds one of the credential's live slots (SUBSCRIPTIONS_PER_HOLDER across
 * processes, shared with GraphQL subscriptions), and before each delivery the caller is judged
 * again as its credential stands then, and the resource read as it would read it: a revoked key's
 * stream ends, a resource it may no longer read is not announced. Between changes the credential
 * is checked every RECHECK_MS.
 */
import {
  createMcpHandler,
  InMemoryServerEventBus,
  SUBSCRIPTION_ID_META_KEY,
  type AuthInfo,
  type Server,
} from '@modelcontextprotocol/server';
import { toWebRequest } from '@modelcontextprotocol/node';
import type { Context } from 'koa';
import type { LivePort } from '../src/context.js';
import { SUBSCRIPTIONS_PER_HOLDER, targetOf, type LiveEvent, type LiveInterest, type LiveStream } from '../src/live/hub.js';
import { DomainError } from '../src/errors.js';
import type { ResourceSubscriptionPort } from '../src/services/resourceSubscriptions.js';
import { parseResourceUri, resourceUri } from './mcpResources.js';

/** Resource URIs one `subscriptions/listen` may name. */
export const MAX_LISTEN_URIS = 100;
/** How often an open stream checks its credential when nothing changes. */
export const RECHECK_MS = 5_000;
/** SSE keep-alive comments, so proxies do not close a quiet stream. */
const KEEPALIVE_MS = 15_000;
/** Events after which the list of resources changes (one appears, goes, or moves between sections of different visibility). */
const LIST_ACTIONS = new Set([
  'article.created',
  'article.moved',
  'memory.note.created',
  'memory.note.deleted',
  'openapi.synced',
  'openapi.detached',
  'openapi.page_detached',
]);

/** A change as MCP announces it: the resource it updated (if one) and whether the list of resources changed. */
export interface ResourceChange {
  event: LiveEvent;
  uri: string | null;
  listChanged: boolean;
}

/** Each event's change, made once for all the streams it reaches. */
const changes = new WeakMap<LiveEvent, ResourceChange>();

/** The resource an event changed, and whether it changed the list of resources. */
export function changeOf(event: LiveEvent): ResourceChange {
  let change = changes.get(event);
  if (!change) changes.set(event, (change = changeNow(event)));
  return change;
}

function changeNow(event: LiveEvent): ResourceChange {
  const kind = event.targetType === 'memory_note' ? 'note' : event.targetType === 'article' ? 'article' : null;
  return {
    event,
    uri: kind && event.targetId ? resourceUri(event.workspaceId, kind, event.targetId) : null,
    listChanged: LIST_ACTIONS.has(event.action),
  };
}

/** What a stream asks of the service about its caller, as the credential stands at that moment. */
export interface CallerNow {
  /** The credential (as the client sent it): streams with the same one share their periodic check (see Rechecks). */
  readonly credential: string;
  /**
   * Its effective permissions now; null when the credential is no longer valid (revoked, expired).
   * `occasion`: the change being delivered (its id), whose streams of the same credential share one check.
   */
  permissions(occasion?: string): Promise<ReadonlySet<string> | null>;
  /** Whether it may read the resource now (the read REST would run, as this caller; shared as `permissions` is). */
  mayRead(uri: string, occasion?: string): Promise<boolean>;
  /**
   * Both at once for a change being delivered: the permissions (null: no longer valid) and, when
   * `uri` is given, whether it may read it. One answer per credential, resource and change, shared
   * by the credential's streams, so each stream waits on one promise rather than a chain of checks.
   */
  verdict(uri: string | null, occasion: string): Promise<Verdict | null>;
}

/** The caller as a change finds it: its permissions, and whether it may read the changed resource (false when not asked). */
export interface Verdict {
  permissions: ReadonlySet<string>;
  readable: boolean;
}

/** What the MCP door hands the streams. */
export interface ListenDeps {
  live: LivePort;
  subscriptions: ResourceSubscriptionPort;
  /** Open streams of this process, ended together when the service drains. */
  open: OpenStreams;
  rechecks: Rechecks;
}

/** This process's open change streams: each registers how to end it gracefully. */
export class OpenStreams {
  private readonly enders = new Set<() => Promise<void>>();
  get size(): number {
    return this.enders.size;
  }
  add(end: () => Promise<void>): () => void {
    this.enders.add(end);
    return () => void this.enders.delete(end);
  }
  /** Ends every open stream (the service drains). */
  async endAll(): Promise<void> {
    await Promise.all([...this.enders].map((end) => end().catch(() => undefined)));
  }
}

/**
 * The periodic checks of this process's open streams between changes, one per credential: every
 * RECHECK_MS it is judged once and each of its streams is told (null: no longer valid), rather
 * than a timer and a check per stream (a thousand open streams on a hundred keys).
 */
export class Rechecks {
  private readonly groups = new Map<string, { timer: NodeJS.Timeout; members: Set<Member> }>();

  /** Tells `told` what each check of `caller`'s credential finds, until the returned function is called. */
  join(caller: CallerNow, told: Told): () => void {
    let group = this.groups.get(caller.credential);
    if (!group) {
      const members = new Set<Member>();
      const timer = setInterval(() => void check(members), RECHECK_MS);
      timer.unref();
      this.groups.set(caller.credential, (group = { timer, members }));
    }
    const member = { caller, told };
    const { members, timer } = group;
    members.add(member);
    return () => {
      members.delete(member);
      if (members.size || this.groups.get(caller.credential)?.members !== members) return;
      clearInterval(timer);
      this.groups.delete(caller.credential);
    };
  }
}

/** Judges the credential once (as its first open stream's caller) and tells every stream. */
async function check(members: Set<Member>): Promise<void> {
  const first = members.values().next().value;
  if (!first) return;
  const permissions = await first.caller.permissions().catch(() => null);
  for (const { told } of [...members]) told(permissions);
}

interface Member {
  caller: CallerNow;
  told: Told;
}

/** What a periodic check tells a stream: its credential's permissions now, or null once it is no longer valid. */
type Told = (permissions: ReadonlySet<string> | null) => void;

/**
 * Feeds a stream the changes of `workspaces` for one caller: holds a slot of the credential,
 * re-checks it before each change and every RECHECK_MS, and ends (`onEnd`) when it is no longer
 * valid. `deliver` decides what of each change to send.
 */
class ChangeFeed {
  private lease: string | null = null;
  private readonly streams: LiveStream[] = [];
  private leaveRechecks: (() => void) | null = null;
  private ended = false;

  constructor(
    private readonly deps: ListenDeps,
    private readonly holder: string,
    private readonly caller: CallerNow,
    /** A change to send (null: a periodic check found the caller still valid, with these permissions). */
    private readonly deliver: (change: ResourceChange | null, permissions: ReadonlySet<string>, readable: boolean) => Promise<void> | void,
    private readonly onEnd: () => Promise<void>,
    /**
     * Whether a change concerns this stream at all (a resource it watches, a list change it asked
     * for): the hub drops the rest before the caller is judged again, so a change to one note does
     * not cost every open stream a check of its credential.
     */
    private readonly relevant: (change: ResourceChange) => boolean = () => true,
    /** The same, told to the hub in advance when the stream knows it (see LiveInterest). */
    private readonly interest?: LiveInterest,
    /** The resource of a change whose readability the delivery needs (judged with the credential, see CallerNow.verdict). */
    private readonly reads: (change: ResourceChange) => string | null = () => null,
  ) {}

  /** Takes the slot and subscribes (a `rate_limited` DomainError past the credential's slots). */
  async start(workspaces: string[]): Promise<void> {
    this.lease = await this.deps.live.acquire(this.holder, workspaces[0] ?? '', 'mcp', SUBSCRIPTIONS_PER_HOLDER);
    try {
      for (const workspace of workspaces)
        this.streams.push(
          await this.deps.live.subscribe(
            workspace,
            (e) => {
              const change = changeOf(e);
              return (change.uri !== null || change.listChanged) && this.relevant(change);
            },
            this.interest,
          ),
        );
    } catch (error) {
      await this.stop();
      throw error;
    }
    for (const stream of this.streams) void this.pump(stream);
    this.leaveRechecks = this.deps.rechecks.join(this.caller, (permissions) => {
      if (this.ended) return;
      if (!permissions) void this.end();
      else void this.deliver(null, permissions, false);
    });
  }

  private async pump(stream: LiveStream): Promise<void> {
    try {
      for await (const event of stream) {
        const change = changeOf(event);
        // No verdict: the credential is no longer valid (or the stream ended meanwhile), and the stream ends.
        const verdict = this.ended ? null : await this.caller.verdict(this.reads(change), event.id).catch(() => null);
        if (!verdict) break;
        const sent = this.deliver(change, verdict.permissions, verdict.readable);
        if (sent) await sent;
      }
    } catch {
      // A subscriber too slow for the hub, or the hub closing: the stream ends.
    }
    await this.end();
  }

  private async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.stop();
    await this.onEnd();
  }

  /** Frees the slot and the subscriptions (the client went away, or the stream ended). */
  async stop(): Promise<void> {
    this.ended = true;
    this.leaveRechecks?.();
    this.leaveRechecks = null;
    for (const stream of this.streams.splice(0)) await stream.return?.().catch(() => undefined);
    const lease = this.lease;
    this.lease = null;
    if (lease) await this.deps.live.release(lease).catch(() => undefined);
  }
}

/** What a listen asks of the hub: the events about its resources, and those that change the list if it asked for them. */
function interestIn(uris: string[], listChanges: boolean): LiveInterest {
  const targets = uris.map((uri) => {
    const ref = parseResourceUri(uri)!;
    // changeOf names an event's resource by resourceUri(targetId): the target whose URI this is.
    return targetOf(ref.kind === 'note' ? 'memory_note' : 'article', ref.key);
  });
  return { targets, actions: listChanges ? [...LIST_ACTIONS] : [] };
}

/** A JSON-RPC error answered in the body of an HTTP 200, as the SDK answers a refused listen. */
function rpcError(ctx: Context, id: unknown, code: number, message: string, data?: unknown): void {
  ctx.status = 200;
  ctx.body = { jsonrpc: '2.0', id: id ?? null, error: { code, message, ...(data === undefined ? {} : { data }) } };
}

interface ListenFilter {
  resourceSubscriptions?: unknown;
  resourcesListChanged?: boolean;
  toolsListChanged?: boolean;
}

/** What a listen's acknowledgement honoured (the SDK narrows the asked filter to the server's capabilities). */
interface Honoured {
  resourceSubscriptions?: string[];
  resourcesListChanged?: boolean;
  toolsListChanged?: boolean;
}

/**
 * The notices of one listen stream, written straight to its response as one SSE frame each, in the
 * SDK's own format (the JSON-RPC notification stamped with the subscription id). The SDK answers
 * the listen — its acknowledgement, keep-alives and closing result — but a change reaching a
 * thousand streams would otherwise pass, per stream, through the SDK's event bus, a new stamped
 * object, a text encoder and a web stream before the socket; here it costs a string and a write.
 * Notices wait for the acknowledgement (the stream's first frame), are kept to what it honoured,
 * and stop when the stream closes, so none follows the closing result.
 */
class NoticeWriter {
  private honoured: Honoured | null = null;
  private pending: string[] = [];
  private closed = false;
  private readonly stamp: string;

  constructor(
    private readonly res: Context['res'],
    subscriptionId: unknown,
  ) {
    this.stamp = `"_meta":{${JSON.stringify(SUBSCRIPTION_ID_META_KEY)}:${JSON.stringify(subscriptionId ?? null)}}`;
  }

  /** The acknowledgement went out (its frame, as the SDK wrote it): what it honoured decides, and waiting notices follow. */
  acknowledged(frame: string): void {
    const data = /^data: (.*)$/m.exec(frame)?.[1];
    try {
      this.honoured = (JSON.parse(data ?? '{}') as { params?: { notifications?: Honoured } }).params?.notifications ?? {};
    } catch {
      this.honoured = {};
    }
    for (const pending of this.pending.splice(0)) this.write(pending);
  }

  /** No more notices: the stream is closing (its closing result may follow) or closed. */
  close(): void {
    this.closed = true;
    this.pending = [];
  }

  resourceUpdated(uri: string): void {
    if (this.honoured && !this.honoured.resourceSubscriptions?.includes(uri)) return;
    this.send('notifications/resources/updated', `{"uri":${JSON.stringify(uri)},${this.stamp}}`);
  }

  resourcesListChanged(): void {
    if (!this.honoured || this.honoured.resourcesListChanged) this.send('notifications/resources/list_changed', `{${this.stamp}}`);
  }

  toolsListChanged(): void {
    if (!this.honoured || this.honoured.toolsListChanged) this.send('notifications/tools/list_changed', `{${this.stamp}}`);
  }

  private send(method: string, params: string): void {
    if (this.closed) return;
    const frame = `event: message\ndata: {"jsonrpc":"2.0","method":"${method}","params":${params}}\n\n`;
    if (this.honoured) this.write(frame);
    else this.pending.push(frame);
  }

  private write(frame: string): void {
    if (!this.closed && !this.res.writableEnded && !this.res.destroyed) this.res.write(frame);
  }
}

/**
 * What a listen stream sends of each change: its watched resources' updates (as the caller may read
 * them then), list changes if asked, and a tools list change when the caller's permissions moved.
 */
function listenDelivery(filter: ListenFilter | undefined, watched: Set<string>, notices: NoticeWriter) {
  let grantedTools: string | null = null;
  const toolsNow = (permissions: ReadonlySet<string>) => {
    const tools = toolsOf(permissions);
    if (grantedTools !== null && tools !== grantedTools) notices.toolsListChanged();
    grantedTools = tools;
  };
  const deliver = (change: ResourceChange | null, permissions: ReadonlySet<string>, readable: boolean): void => {
    if (filter?.toolsListChanged) toolsNow(permissions);
    if (!change) return;
    if (change.listChanged && filter?.resourcesListChanged) notices.resourcesListChanged();
    if (readable && change.uri && watched.has(change.uri)) notices.resourceUpdated(change.uri);
  };
  /** The permissions the stream starts with (a later change is compared with them). */
  return { deliver, granted: (permissions: ReadonlySet<string>) => void (grantedTools = toolsOf(permissions)) };
}

/** The tools a caller's permissions grant, as a key to compare (the tool list follows the permissions); made once per set. */
function toolsOf(permissions: ReadonlySet<string>): string {
  let tools = toolKeys.get(permissions);
  if (tools === undefined) toolKeys.set(permissions, (tools = [...permissions].sort().join()));
  return tools;
}

/** Shared sets (a check's answer reaches every stream of a credential) are sorted once. */
const toolKeys = new WeakMap<ReadonlySet<string>, string>();

/**
 * A 2026-07-28 `subscriptions/listen` (see the module's comment). `makeServer` makes the caller's
 * server (its capabilities decide what the acknowledgement honours); `bound` is the workspace the
 * credential is bound to, if it is.
 */
export async function serveListen(
  ctx: Context,
  message: { id?: unknown; params?: { notifications?: ListenFilter } },
  caller: CallerNow & { holder: string; bound: string | null; authInfo: AuthInfo },
  makeServer: () => Server,
  deps: ListenDeps,
): Promise<void> {
  const filter = message.params?.notifications;
  const uris = Array.isArray(filter?.resourceSubscriptions) ? (filter.resourceSubscriptions as unknown[]) : [];
  if (uris.length > MAX_LISTEN_URIS)
    return rpcError(
      ctx,
      message.id,
      -32602,
      `Invalid params: a listen may name at most ${MAX_LISTEN_URIS} resources (${uris.length} were named).`,
    );
  const readable = await readableOf(uris, caller, filter);
  const workspaces = [...new Set([...(caller.bound ? [caller.bound] : []), ...readable.map((u) => parseResourceUri(u)!.workspace)])];
  const watched = new Set(readable);
  const handler = createMcpHandler(() => makeServer(), {
    legacy: 'reject',
    bus: new InMemoryServerEventBus(), // the SDK's listen needs one; notices go through NoticeWriter instead
    maxSubscriptions: 1,
    keepAliveMs: KEEPALIVE_MS,
    onerror: () => undefined,
  });
  const notices = new NoticeWriter(ctx.res, message.id);
  const closeHandler = () => {
    notices.close();
    return handler.close();
  };
  const delivery = listenDelivery(filter, watched, notices);
  let unregister: () => void = () => undefined;
  const feed = new ChangeFeed(
    deps,
    caller.holder,
    caller,
    delivery.deliver,
    async () => {
      unregister();
      await closeHandler();
    },
    (change) => (change.uri !== null && watched.has(change.uri)) || (change.listChanged && filter?.resourcesListChanged === true),
    interestIn(readable, filter?.resourcesListChanged === true),
    (change) => (change.uri !== null && watched.has(change.uri) ? change.uri : null),
  );
  try {
    if (filter && workspaces.length) await feed.start(workspaces);
  } catch (error) {
    if (error instanceof DomainError) return rpcError(ctx, message.id, -32603, `${error.code}: ${error.message}`, error.details);
    throw error;
  }
  delivery.granted((await caller.permissions()) ?? new Set());
  const abort = new AbortController();
  const answer = await handler.fetch(await toWebRequest(ctx.req, message, { signal: abort.signal }), {
    authInfo: caller.authInfo,
    parsedBody: message,
  });
  if (!answer.headers.get('content-type')?.startsWith('text/event-stream') || !answer.body) {
    notices.close();
    await feed.stop();
    ctx.status = answer.status;
    ctx.body = Buffer.from(await answer.arrayBuffer());
    return;
  }
  unregister = deps.open.add(closeHandler);
  sendStream(
    ctx,
    answer,
    () => {
      notices.close();
      abort.abort();
      unregister();
      void feed.stop();
      void handler.close();
    },
    (first) => notices.acknowledged(new TextDecoder().decode(first)),
  );
}

/** The named resources the caller may read now; the filter the stream acknowledges keeps only those. */
async function readableOf(uris: unknown[], caller: CallerNow, filter: ListenFilter | undefined): Promise<string[]> {
  const readable: string[] = [];
  for (const uri of uris) if (typeof uri === 'string' && parseResourceUri(uri) && (await caller.mayRead(uri))) readable.push(uri);
  if (filter) {
    if (readable.length) filter.resourceSubscriptions = readable;
    else delete filter.resourceSubscriptions;
  }
  return readable;
}

/** Sends a web stream answer as it comes; `onFirst` once its first chunk is written, `onClose` when the client or the stream ends it. */
function sendStream(ctx: Context, answer: Response, onClose: () => void, onFirst: (chunk: Uint8Array) => void): void {
  ctx.respond = false;
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => (headers[name] = value));
  ctx.res.writeHead(answer.status, headers);
  ctx.res.flushHeaders();
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    onClose();
  };
  ctx.res.on('close', close);
  // Each chunk written as it comes (a thousand open streams: no stream adapter between).
  const reader = answer.body!.getReader();
  let first = true;
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || closed) break;
        ctx.res.write(value);
        if (first) onFirst(value);
        first = false;
      }
      if (!ctx.res.writableEnded) ctx.res.end();
    } catch {
      // The stream failed or the client went: close below.
    }
    close();
  })();
}

/**
 * A 2025-11-25 client's GET /mcp: a stream of the credential's subscriptions (resources/subscribe)
 * and of list changes in the workspace it is bound to (an org-wide credential: in the workspaces it
 * had subscriptions in when the stream opened).
 */
export async function serveLegacyStream(
  ctx: Context,
  caller: CallerNow & { holder: string; bound: string | null },
  deps: ListenDeps,
): Promise<void> {
  const workspaces = caller.bound ? [caller.bound] : await deps.subscriptions.workspacesOf(caller.holder);
  const holders = new Map<string, Promise<Set<string>>>();
  const subscribed = (change: ResourceChange) => {
    const key = change.event.id;
    if (!holders.has(key)) {
      holders.set(key, deps.subscriptions.holdersOf(change.event.workspaceId, change.uri!));
      setTimeout(() => holders.delete(key), 10_000).unref();
    }
    return holders.get(key)!;
  };
  let keepAlive: NodeJS.Timeout | null = null;
  let unregister: () => void = () => undefined;
  const write = (method: string, params: Record<string, unknown>) =>
    ctx.res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method, params })}\n\n`);
  const finish = () => {
    unregister();
    if (keepAlive) clearInterval(keepAlive);
    if (!ctx.res.writableEnded) ctx.res.end();
    return Promise.resolve();
  };
  const feed = new ChangeFeed(
    deps,
    caller.holder,
    caller,
    async (change) => {
      if (!change) return;
      if (change.listChanged) write('notifications/resources/list_changed', {});
      if (change.uri && (await subscribed(change)).has(caller.holder) && (await caller.mayRead(change.uri, change.event.id)))
        write('notifications/resources/updated', { uri: change.uri });
    },
    finish,
  );
  if (workspaces.length) await feed.start(workspaces);
  ctx.respond = false;
  ctx.res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  ctx.res.flushHeaders();
  keepAlive = setInterval(() => ctx.res.write(': keepalive\n\n'), KEEPALIVE_MS);
  keepAlive.unref();
  unregister = deps.open.add(async () => {
    await feed.stop();
    await finish();
  });
  ctx.res.on('close', () => {
    void feed.stop();
    void finish();
  });
}

/**
 * A node-postgres Client that connects the way libpq does with several hosts: it tries the hosts
 * of a multi-host URL in order and keeps the first whose server is of the kind
 * `target_session_attrs` asks for. Chosen over a connection factory or a library because the
 * pools of this service (node-postgres's, and knex's under MikroORM) each make their own clients
 * by `new Client(config)` and then use that very object; no maintained library adds libpq's
 * multi-host rules to node-postgres (pg-pool's and knex's choices are one host). So the client
 * itself picks its host: one pg.Client whose connection is made again, to the next host, when a
 * host is down or of the wrong kind. The kind is read from what PostgreSQL 14 and later report
 * at start (`in_hot_standby`, `default_transaction_read_only`, as libpq reads them), with no
 * extra round trip; a server that does not report them (older, or behind PgBouncer) is asked.
 */
import { readFileSync } from 'node:fs';
import type { EventEmitter } from 'node:events';
import pg from 'pg';
import { parseDatabaseUrl, type HostAddress, type MultiHostUrl, type SessionAttrs } from './databaseUrl.js';

/** How long a host that was down or of the wrong kind is tried after the others (libpq tries it first every time). */
const REMEMBER_MS = 10_000;
/** Without `connect_timeout` in the URL: a host that does not answer must not hold a new connection for minutes. */
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

/** The kind of server a connection reached. */
interface ServerKind {
  standby: boolean;
  readOnly: boolean;
}

/** Whether a server of `kind` is one `attrs` keeps (`prefer-standby` takes a standby on its first pass, any on its second). */
export function keeps(attrs: SessionAttrs, kind: ServerKind, pass: 1 | 2): boolean {
  switch (attrs) {
    case 'any':
      return true;
    case 'read-write':
      return !kind.readOnly && !kind.standby;
    case 'primary':
      return !kind.standby;
    case 'read-only':
      return kind.readOnly || kind.standby;
    case 'standby':
      return kind.standby;
    case 'prefer-standby':
      return pass === 2 || kind.standby;
  }
}

/** The connection settings of a multi-host URL's first host, as node-postgres takes them (no `connectionString`: it would override these). */
function clientSettings(url: MultiHostUrl): pg.ClientConfig & Record<string, unknown> {
  const parsed = new URL(url.urlFor(0));
  const settings: pg.ClientConfig & Record<string, unknown> = {
    user: decodeURIComponent(parsed.username) || undefined,
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    database: decodeURIComponent(parsed.pathname.slice(1)) || undefined,
  };
  const files: Record<string, string> = {};
  for (const [name, value] of parsed.searchParams) {
    if (name === 'sslrootcert' || name === 'sslcert' || name === 'sslkey') files[name] = readFileSync(value, 'utf8');
    else settings[name] = value;
  }
  const tls: Record<string, unknown> = {
    ...(files.sslrootcert ? { ca: files.sslrootcert } : {}),
    ...(files.sslcert ? { cert: files.sslcert } : {}),
    ...(files.sslkey ? { key: files.sslkey } : {}),
  };
  // libpq's meanings: require checks nothing (but the CA when one is given), verify-ca not the host name.
  const skipName = { checkServerIdentity: () => undefined };
  switch (url.sslmode) {
    case undefined:
    case 'disable':
    case 'allow':
      settings.ssl = false;
      break;
    case 'prefer':
    case 'no-verify':
      settings.ssl = { ...tls, rejectUnauthorized: false };
      break;
    case 'require':
      settings.ssl = files.sslrootcert ? { ...tls, ...skipName } : { ...tls, rejectUnauthorized: false };
      break;
    case 'verify-ca':
      settings.ssl = { ...tls, ...skipName };
      break;
    case 'verify-full':
      settings.ssl = tls;
      break;
  }
  settings.keepAlive = true;
  return settings;
}

/**
 * The hosts of one multi-host URL and what a connection keeps, shared by every pool on that URL:
 * it remembers which hosts were down or of the wrong kind lately, so that after a failover new
 * connections do not each pay for the old primary first.
 */
export class HostChoice {
  private readonly missed = new Map<number, number>();
  readonly settings: pg.ClientConfig & Record<string, unknown>;
  /**
   * How long one host may take to connect (`connect_timeout`, per host as in libpq). Not a pool
   * setting: pg-pool's own timeout would span every host a new connection tries.
   */
  readonly connectTimeoutMs: number;

  constructor(readonly url: MultiHostUrl) {
    this.settings = clientSettings(url);
    this.connectTimeoutMs = url.connectTimeoutSeconds ? url.connectTimeoutSeconds * 1000 : DEFAULT_CONNECT_TIMEOUT_MS;
  }

  /** The hosts in the order to try them: the URL's, with those that missed within the last seconds last. */
  order(): { index: number; host: HostAddress }[] {
    const now = Date.now();
    const all = this.url.hosts.map((host, index) => ({ index, host, late: (this.missed.get(index) ?? 0) > now - REMEMBER_MS }));
    return [...all.filter((h) => !h.late), ...all.filter((h) => h.late)];
  }

  missedAt(index: number): void {
    this.missed.set(index, Date.now());
  }

  keptAt(index: number): void {
    this.missed.delete(index);
  }

  private madeClass: typeof pg.Client | null = null;

  /** The Client class whose instances pick their host among these (for pools, and for knex's driver). */
  clientClass(): typeof pg.Client {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the class below is made for this choice
    const choice = this;
    this.madeClass ??= class extends HostPickingClient {
      constructor(config?: pg.ClientConfig) {
        super(choice, config);
      }
    };
    return this.madeClass;
  }

  /** A new client config for this URL (its settings, with `extra` on top). */
  config(extra: pg.ClientConfig = {}): pg.ClientConfig {
    return { ...this.settings, ...extra };
  }
}

/** node-postgres's connection object, made again for each host tried. */
type PgConnection = EventEmitter & { stream: EventEmitter & { destroy(): void }; end(): void };
const Connection = (pg as unknown as { Connection: new (options: object) => PgConnection }).Connection;

/** The fields of pg.Client read and reset here to connect the same client again (node-postgres 8). */
interface ClientInternals {
  connection: PgConnection;
  connectionParameters: { host: string; port: number; ssl: unknown; client_encoding?: string };
  connectionTimeoutHandle?: NodeJS.Timeout;
  _connectionTimeoutMillis: number;
  _connecting: boolean;
  _connected: boolean;
  _connectionError: boolean;
  _ending: boolean;
  _ended: boolean;
  _queryable: boolean;
  _activeQuery: unknown;
  _queryQueue: unknown[];
  processID: number | null;
  secretKey: number | null;
  host: string;
  port: number;
  ssl: unknown;
}

type ConnectCallback = ((err: Error) => void) | ((err: null, c: pg.Client) => void);

/** A pg.Client that tries the hosts of a HostChoice in order and keeps the first of the kind asked for. */
export class HostPickingClient extends pg.Client {
  private reported: Record<string, string> = {};
  private readonly options: pg.ClientConfig;

  constructor(
    private readonly choice: HostChoice,
    config: pg.ClientConfig = {},
  ) {
    const options = { ...choice.settings, ...config, connectionString: undefined };
    super(options);
    this.options = options;
    (this as unknown as ClientInternals)._connectionTimeoutMillis = choice.connectTimeoutMs;
    this.listenForKind();
  }

  override connect(): Promise<pg.Client>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.Client> | void {
    const picked = this.pick().then(() => this as pg.Client);
    if (!callback) return picked;
    picked.then(
      (client) => (callback as (err: null, c: pg.Client) => void)(null, client),
      (error: Error) => (callback as (err: Error) => void)(error),
    );
  }

  /** Tries the hosts in order (for `prefer-standby`, twice: a standby first, then any) and keeps the first that fits. */
  private async pick(): Promise<void> {
    // A connection lost while its kind is asked is one host missed, not an error event for a pool not yet listening.
    const quiet = () => undefined;
    this.on('error', quiet);
    try {
      await this.tryHosts();
    } finally {
      this.off('error', quiet);
    }
  }

  private async tryHosts(): Promise<void> {
    const attrs = this.choice.url.targetSessionAttrs;
    const problems: string[] = [];
    let fresh = true;
    for (const pass of attrs === 'prefer-standby' ? ([1, 2] as const) : ([1] as const)) {
      for (const { index, host } of this.choice.order()) {
        if (!fresh) this.reset();
        fresh = false;
        const kind = await this.reach(host).catch((error: Error) => {
          problems.push(`${host.host}:${host.port}: ${error.message}`);
          return null;
        });
        if (kind && keeps(attrs, kind, pass)) {
          this.choice.keptAt(index);
          return;
        }
        if (kind) problems.push(`${host.host}:${host.port}: ${describeKind(kind)}, not ${attrs}`);
        if (pass === 1) this.choice.missedAt(index);
      }
    }
    this.reset();
    throw Object.assign(new Error(`no host serves target_session_attrs=${attrs}: ${problems.join('; ')}`), { code: '08001' });
  }

  /** Connects this client to `host` (over TLS first when `sslmode=prefer`, then without) and says what kind of server it is. */
  private async reach(host: HostAddress): Promise<ServerKind> {
    this.aim(host, this.options.ssl ?? false);
    try {
      await this.connectOnce();
    } catch (error) {
      if (this.choice.url.sslmode !== 'prefer' || !/does not support SSL/.test((error as Error).message)) throw error;
      this.reset();
      this.aim(host, false);
      await this.connectOnce();
    }
    return this.kind();
  }

  private connectOnce(): Promise<void> {
    return new Promise((resolve, reject) =>
      super.connect((error: Error | null) => {
        // Synchronously, before the connection's own end event: this client must not report the end of a failed attempt.
        if (error) this.detach();
        if (error) reject(error);
        else resolve();
      }),
    );
  }

  /** The kind of server reached: from the parameters it reported at start, else asked. */
  private async kind(): Promise<ServerKind> {
    const { in_hot_standby: standby, default_transaction_read_only: readOnly } = this.reported;
    if (standby !== undefined && readOnly !== undefined) return { standby: standby === 'on', readOnly: readOnly === 'on' };
    const { rows } = await this.query<{ standby: boolean; read_only: string }>(
      "select pg_is_in_recovery() as standby, current_setting('transaction_read_only') as read_only",
    );
    return { standby: rows[0].standby, readOnly: rows[0].read_only === 'on' };
  }

  private aim(host: HostAddress, ssl: unknown): void {
    const self = this as unknown as ClientInternals;
    self.host = self.connectionParameters.host = host.host;
    self.port = self.connectionParameters.port = host.port;
    self.ssl = self.connectionParameters.ssl = ssl;
    // The connection object was made for the settings' TLS: a change of TLS needs a new one.
    if ((self.connection as unknown as { ssl: unknown }).ssl !== ssl) this.reset(ssl);
  }

  /** Drops the current connection (quietly) and makes a new one, with every flag of a client never connected. */
  private reset(ssl: unknown = (this as unknown as ClientInternals).connectionParameters.ssl): void {
    const self = this as unknown as ClientInternals;
    this.detach();
    self.connection.end();
    self.connection = new Connection({
      ssl,
      keepAlive: this.options.keepAlive ?? false,
      keepAliveInitialDelayMillis: this.options.keepAliveInitialDelayMillis ?? 0,
      encoding: self.connectionParameters.client_encoding || 'utf8',
    });
    Object.assign(self, {
      _connecting: false,
      _connected: false,
      _connectionError: false,
      _ending: false,
      _ended: false,
      _queryable: true,
      _activeQuery: null,
      _queryQueue: [],
      processID: null,
      secretKey: null,
    });
    this.reported = {};
    this.listenForKind();
  }

  /** Unhooks this client from its current connection, which may still emit its end or a late socket error. */
  private detach(): void {
    const self = this as unknown as ClientInternals;
    clearTimeout(self.connectionTimeoutHandle);
    self.connection.removeAllListeners();
    self.connection.on('error', () => undefined);
    self.connection.stream.on('error', () => undefined);
  }

  private listenForKind(): void {
    (this as unknown as ClientInternals).connection.on('parameterStatus', (msg: { parameterName: string; parameterValue: string }) => {
      this.reported[msg.parameterName] = msg.parameterValue;
    });
  }
}

function describeKind(kind: ServerKind): string {
  return kind.standby ? 'a standby' : kind.readOnly ? 'read-only' : 'read-write';
}

/** The host choice a client config carries (see pgConfigOf); spreading the config keeps it. */
const CHOICE = Symbol('hostChoice');
type WithChoice = pg.ClientConfig & { [CHOICE]?: HostChoice };
/** One choice per URL, so that every pool on it shares what it learnt of the hosts. */
const choices = new Map<string, HostChoice>();

/**
 * node-postgres settings for a URL: the URL itself when node-postgres reads it (one host, no
 * `target_session_attrs`: exactly as before), else the first host's settings carrying the host
 * choice that `pgClientClass` and `newPgClient` pick hosts by.
 */
export function pgConfigOf(url: string): pg.ClientConfig {
  const parsed = parseDatabaseUrl(url);
  if (!parsed) return { connectionString: url };
  let choice = choices.get(url);
  if (!choice) choices.set(url, (choice = new HostChoice(parsed)));
  const config: WithChoice = choice.config();
  config[CHOICE] = choice;
  return config;
}

/** The Client class for a config of pgConfigOf (for pools: `new pg.Pool({ ...config, Client })`). */
export function pgClientClass(config: pg.ClientConfig): typeof pg.Client {
  return (config as WithChoice)[CHOICE]?.clientClass() ?? pg.Client;
}

/** A new client for a config of pgConfigOf. */
export function newPgClient(config: pg.ClientConfig): pg.Client {
  const Client = pgClientClass(config);
  return new Client(config);
}

/** The host choice of a config of pgConfigOf, if it has several hosts or target_session_attrs. */
export function hostChoiceOf(config: pg.ClientConfig): HostChoice | null {
  return (config as WithChoice)[CHOICE] ?? null;
}

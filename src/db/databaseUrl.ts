/**
 * PostgreSQL URLs with libpq's meaning: several `host:port` pairs (`postgres://u@h1:5432,h2:5433/db`)
 * and `target_session_attrs`, which node-postgres does not understand (its URL parser takes the
 * first host only, or throws ERR_INVALID_URL). A URL with one host and no `target_session_attrs`
 * is left to node-postgres exactly as before; the others are read here into the hosts a new
 * connection tries in order and the kind of server it keeps (see hostPicking.ts).
 */

/** libpq's `target_session_attrs`: which server a new connection keeps. */
export const SESSION_ATTRS = ['any', 'read-write', 'read-only', 'primary', 'standby', 'prefer-standby'] as const;
export type SessionAttrs = (typeof SESSION_ATTRS)[number];

/** libpq's `sslmode` values this service understands for multi-host URLs. */
const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'] as const;
export type SslMode = (typeof SSL_MODES)[number];

export interface HostAddress {
  host: string;
  port: number;
}

/** A URL node-postgres cannot take alone: its hosts, what to keep, and the URL of each host for node-postgres. */
export interface MultiHostUrl {
  hosts: HostAddress[];
  targetSessionAttrs: SessionAttrs;
  sslmode: SslMode | undefined;
  /** `connect_timeout` (seconds, per host as in libpq), if the URL sets one. */
  connectTimeoutSeconds: number | undefined;
  /** The URL with only host `i` and without the parameters read here: what node-postgres parses for that host. */
  urlFor(i: number): string;
}

/** Where the writes go: a server that takes them (libpq's `read-write`, or `primary`), or `any` as libpq defaults. */
export const WRITE_ATTRS: readonly SessionAttrs[] = ['any', 'read-write', 'primary'];

const SCHEME = /^(postgres(?:ql)?):\/\//i;
const DEFAULT_PORT = 5432;

/**
 * Reads a PostgreSQL URL: null when node-postgres takes it as it is (one host, no
 * `target_session_attrs`), else its hosts and attributes. Throws an Error naming the bad part
 * (never the password) for a URL that is not one.
 */
export function parseDatabaseUrl(url: string): MultiHostUrl | null {
  // node-postgres's own unix-socket form goes to it as before.
  if (url.startsWith('socket:')) return null;
  const scheme = SCHEME.exec(url);
  if (!scheme) throw new Error('must be a postgres:// or postgresql:// URL');
  const rest = url.slice(scheme[0].length);
  const end = rest.search(/[/?#]/);
  const authority = end === -1 ? rest : rest.slice(0, end);
  const tail = end === -1 ? '' : rest.slice(end);
  const at = authority.lastIndexOf('@');
  const userinfo = at === -1 ? '' : authority.slice(0, at + 1);
  const hostList = at === -1 ? authority : authority.slice(at + 1);
  const query = new URLSearchParams(tail.includes('?') ? tail.slice(tail.indexOf('?') + 1).replace(/#.*$/, '') : '');
  const attrs = query.get('target_session_attrs');
  if (attrs !== null && !SESSION_ATTRS.includes(attrs as SessionAttrs))
    throw new Error(`has target_session_attrs=${attrs}: it must be one of ${SESSION_ATTRS.join(', ')}`);
  const entries = hostList.split(',');
  const hostParam = query.has('host') || query.has('port');
  // One host in a host= parameter (a unix socket directory, say) is node-postgres's, as before; a list there is libpq's other form.
  if (entries.length === 1 && attrs === null && !/,/.test(`${query.get('host') ?? ''}${query.get('port') ?? ''}`)) return null;
  if (hostParam)
    throw new Error('names its hosts in a host= or port= parameter: write them as host:port pairs before the database name instead');
  const hosts = entries.map((entry, i) => hostAddress(entry, i, entries.length));
  const sslmode = query.get('sslmode');
  if (sslmode !== null && !SSL_MODES.includes(sslmode as SslMode))
    throw new Error(`has sslmode=${sslmode}: it must be one of ${SSL_MODES.join(', ')}`);
  const timeout = query.get('connect_timeout');
  const connectTimeoutSeconds = timeout === null || timeout === '' ? undefined : Number(timeout);
  if (connectTimeoutSeconds !== undefined && (!Number.isInteger(connectTimeoutSeconds) || connectTimeoutSeconds < 0))
    throw new Error(`has connect_timeout=${timeout}: it must be a whole number of seconds`);
  for (const name of ['target_session_attrs', 'sslmode', 'connect_timeout']) query.delete(name);
  const path = tail.replace(/[?#].*$/, '');
  const search = query.toString();
  return {
    hosts,
    targetSessionAttrs: (attrs as SessionAttrs | null) ?? 'any',
    sslmode: (sslmode as SslMode | null) ?? undefined,
    connectTimeoutSeconds,
    urlFor: (i) => `${scheme[1]}://${userinfo}${hostText(hosts[i])}${path}${search ? `?${search}` : ''}`,
  };
}

/** One `host[:port]` of a host list (IPv6 in brackets), or an error naming it by position. */
function hostAddress(entry: string, i: number, of: number): HostAddress {
  const which = of > 1 ? `host ${i + 1} of ${of} ("${entry}")` : `host "${entry}"`;
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]*)(?::(.*))?$/.exec(entry);
  if (!match) throw new Error(`has ${which}: it must be host or host:port`);
  const host = match[1].replace(/^\[(.*)\]$/, '$1');
  if (!host) throw new Error(`has ${which}: the host name is empty`);
  if (!/^[A-Za-z0-9._:%-]+$/.test(host)) throw new Error(`has ${which}: the host name has characters a host name cannot have`);
  if (match[2] === undefined || match[2] === '') return { host, port: DEFAULT_PORT };
  const port = Number(match[2]);
  if (!/^\d+$/.test(match[2]) || port < 1 || port > 65535) throw new Error(`has ${which}: the port must be a number from 1 to 65535`);
  return { host, port };
}

function hostText({ host, port }: HostAddress): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Checks a URL setting at start (DATABASE_URL, DATABASE_DIRECT_URL: `write`; DATABASE_READ_URL:
 * reads): the URL as given, or an Error naming the bad part. Where the service writes, a
 * `target_session_attrs` that keeps read-only servers cannot be right.
 */
export function checkDatabaseUrl(url: string, use: 'write' | 'read'): string {
  const parsed = parseDatabaseUrl(url);
  if (parsed && use === 'write' && !WRITE_ATTRS.includes(parsed.targetSessionAttrs))
    throw new Error(
      `has target_session_attrs=${parsed.targetSessionAttrs}, but the service writes there: use read-write (or primary, or any)`,
    );
  return url;
}

/** The URL with its password hidden, for messages and logs. */
export function withoutPassword(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:@/]*:)[^@/]*@/i, '$1***@');
}

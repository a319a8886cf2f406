import { lookup } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Refused destinations: loopback, private, link-local, unique-local, CGNAT, multicast, unspecified,
 * NAT64, the deprecated site-local range, the IPv4-compatible range (`::a.b.c.d`, which some stacks
 * still route to the IPv4 address), and the 6to4 and Teredo ranges (which tunnel to IPv4 addresses
 * that could be internal). IPv4-mapped addresses (`::ffff:a.b.c.d`) are judged by the IPv4 rules.
 */
const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  // `::` (unspecified), `::1` (loopback) and the deprecated IPv4-compatible addresses such as `::7f00:1`.
  ['::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['2002::', 16],
  ['2001::', 32],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv6');

/** What a refusal says: never the address a name resolved to (that would map the internal network for the caller). */
export const NOT_ALLOWED = 'the address is not allowed (loopback, private, link-local and other internal ranges are refused)';
/**
 * What a failed connection says, whatever the socket's error was: a name that does not resolve, a
 * refused or unreachable address (ENOTFOUND, ECONNREFUSED, EHOSTUNREACH <address>) would otherwise
 * tell an anonymous caller what lies behind the service.
 */
export const CONNECTION_FAILED = 'the connection failed (the name did not resolve, or the host refused or did not answer)';
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

export interface SafeFetchOptions {
  /** OUTBOUND_ALLOW_LOOPBACK: tests and local development may reach 127.0.0.0/8 and ::1. */
  allowLoopback: boolean;
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface SafeResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** The request was refused or failed before or while connecting (unsafe target, bad URL, too large, too slow, no connection). */
export class UnsafeTargetError extends Error {}

/** Whether an address may be reached under the loopback setting. */
export function isAllowedAddress(address: string, allowLoopback: boolean): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const ip = mapped ? mapped[1] : address;
  const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
  if (allowLoopback && LOOPBACK.check(ip, family)) return true;
  return !BLOCKED.check(ip, family);
}

/**
 * HTTP(S) request that cannot be pointed at internal addresses: the address is checked at connect
 * time (the DNS answer actually used, so rebinding cannot slip past a pre-check), every redirect is
 * re-checked, and the response is cut at a size cap and a timeout. One module for every outbound
 * call (spec-by-URL fetches, webhooks).
 */
export async function safeFetch(rawUrl: string, options: SafeFetchOptions): Promise<SafeResponse> {
  const maxRedirects = options.maxRedirects ?? 5;
  let url = parseUrl(rawUrl);
  for (let hop = 0; ; hop++) {
    const res = await requestOnce(url, options);
    const location = res.headers.location;
    if (res.status >= 300 && res.status < 400 && location && hop < maxRedirects && (options.method ?? 'GET') === 'GET') {
      url = parseUrl(new URL(location, url).toString());
      continue;
    }
    if (res.status >= 300 && res.status < 400 && location)
      throw new UnsafeTargetError(
        maxRedirects === 0
          ? `it answered HTTP ${res.status}: redirects are not followed`
          : `too many redirects (more than ${maxRedirects})`,
      );
    return res;
  }
}

function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeTargetError('not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UnsafeTargetError(`only http and https URLs are allowed, not ${url.protocol}`);
  if (url.username || url.password) throw new UnsafeTargetError('URLs with credentials are not allowed');
  return url;
}

function requestOnce(url: URL, options: SafeFetchOptions): Promise<SafeResponse> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxBytes = options.maxBytes ?? 5 * 1024 * 1024;
  const checkedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    lookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as unknown as { address: string; family: number }[];
      const refused = list.find((a) => !isAllowedAddress(a.address, options.allowLoopback));
      if (refused || !list.length) return callback(new UnsafeTargetError(NOT_ALLOWED), '', 0);
      if ((lookupOptions as { all?: boolean }).all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
  return new Promise((resolve, reject) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && !isAllowedAddress(host, options.allowLoopback)) return reject(new UnsafeTargetError(NOT_ALLOWED));
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(
      url,
      { method: options.method ?? 'GET', headers: options.headers, lookup: checkedLookup, timeout: timeoutMs, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            req.destroy(new UnsafeTargetError(`response larger than ${maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', (error) => reject(new UnsafeTargetError(CONNECTION_FAILED, { cause: error })));
      },
    );
    // Connect-time check for literal IPs too (no DNS lookup happens for them).
    req.on('socket', (socket) => {
      socket.once('connect', () => {
        const remote = socket.remoteAddress;
        if (remote && !isAllowedAddress(remote, options.allowLoopback)) req.destroy(new UnsafeTargetError(NOT_ALLOWED));
      });
    });
    const timer = setTimeout(() => req.destroy(new UnsafeTargetError(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('timeout', () => req.destroy(new UnsafeTargetError(`no answer within ${timeoutMs} ms`)));
    // The socket's own error (its code, the address) stays the cause, for a debugger, never in the message.
    req.on('error', (error) =>
      reject(error instanceof UnsafeTargetError ? error : new UnsafeTargetError(CONNECTION_FAILED, { cause: error })),
    );
    if (options.body) req.write(options.body);
    req.end();
  });
}

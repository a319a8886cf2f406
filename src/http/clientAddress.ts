import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { Middleware } from './middleware.js';

/**
 * TRUST_PROXY: which proxy in front of the service may say who the client is (`X-Forwarded-For`).
 * Off: the socket's peer is the client, whatever the header says. A hop count: that many proxies
 * append to the header, the last of them being the peer. Addresses: the header is read from the
 * right for as long as the address it names (starting with the peer) is one of these proxies.
 */
export type TrustProxy = { kind: 'off' } | { kind: 'hops'; hops: number } | { kind: 'addresses'; proxies: BlockList; text: string };

export const TRUST_NO_PROXY: TrustProxy = { kind: 'off' };

/** Entries of X-Forwarded-For read at most: a client may send a long header, the proxies add a few. */
const MAX_ENTRIES = 32;

/** `1.2.3.4`, `::1` or a CIDR such as `10.0.0.0/8` or `fd00::/8` into the list; false when it is none of these. */
function addTrusted(list: BlockList, item: string): boolean {
  const [address, prefix, extra] = item.split('/');
  const family = isIP(address);
  if (!family || extra !== undefined) return false;
  const type = family === 6 ? 'ipv6' : 'ipv4';
  if (prefix === undefined) {
    list.addAddress(address, type);
    return true;
  }
  const bits = Number(prefix);
  if (!/^\d{1,3}$/.test(prefix) || bits > (family === 6 ? 128 : 32)) return false;
  list.addSubnet(address, bits, type);
  return true;
}

/**
 * Reads TRUST_PROXY: unset, empty, `off`, `false` or `0` trust nothing; a whole number is a hop
 * count; otherwise a comma-separated list of proxy addresses and CIDR ranges. Throws on anything else.
 */
export function parseTrustProxy(raw: string | undefined): TrustProxy {
  const value = (raw ?? '').trim();
  if (['', 'off', 'false', '0'].includes(value.toLowerCase())) return TRUST_NO_PROXY;
  if (/^\d{1,3}$/.test(value)) return { kind: 'hops', hops: Number(value) };
  const proxies = new BlockList();
  const items = value.split(',').map((item) => item.trim());
  const bad = items.filter((item) => !addTrusted(proxies, item));
  if (bad.length) throw new Error(`is not a hop count or a list of proxy addresses and CIDR ranges: ${bad.join(', ').slice(0, 200)}`);
  return { kind: 'addresses', proxies, text: items.join(',') };
}

/** An address as written in the header (`1.2.3.4`, `1.2.3.4:5678`, `[::1]:80`, `::1`), or null when it is no address. */
function entryAddress(entry: string): string | null {
  let text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) text = bracketed[1];
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(text)) text = text.slice(0, text.lastIndexOf(':'));
  return isIP(text) ? text : null;
}

/** Whether an address is one of the trusted proxies (IPv4-mapped IPv6 addresses judged as IPv4). */
function isTrusted(proxies: BlockList, address: string): boolean {
  return proxies.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

/**
 * One spelling per address, so that every per-address limit counts a client once: an IPv4-mapped
 * IPv6 address (`::ffff:203.0.113.7`, as a dual-stack socket or a proxy may write it, or
 * `::ffff:cb00:7107`) is its IPv4 address, and any other IPv6 address is written as URLs write it
 * (lower case, zeros compressed). Anything else (a zone id, `unknown`) is kept as it is.
 */
export function canonicalAddress(address: string): string {
  if (isIP(address) !== 6) return address;
  let text: string;
  try {
    text = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return address.toLowerCase();
  }
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(text);
  if (!mapped) return text;
  const [high, low] = [parseInt(mapped[1], 16), parseInt(mapped[2], 16)];
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/** The client's address (canonical): the peer's, or the one the trusted proxies name in X-Forwarded-For. */
export function clientAddressOf(peer: string | undefined, forwardedFor: string | string[] | undefined, trust: TrustProxy): string {
  return canonicalAddress(namedAddress(peer, forwardedFor, trust));
}

function namedAddress(peer: string | undefined, forwardedFor: string | string[] | undefined, trust: TrustProxy): string {
  const socket = peer ?? 'unknown';
  if (trust.kind === 'off' || !forwardedFor) return socket;
  // Several headers count as one list, in order (RFC 9110 §5.3).
  const header = Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor;
  const entries = header.split(',').slice(-MAX_ENTRIES);
  if (trust.kind === 'hops') {
    // The last `hops` entries were written by the proxies; the first of those names the client.
    const named = entries.length >= trust.hops ? entries[entries.length - trust.hops] : entries[0];
    return (named !== undefined && entryAddress(named)) || socket;
  }
  let client = canonicalAddress(socket);
  while (isTrusted(trust.proxies, client) && entries.length) {
    const next = entryAddress(entries.pop()!);
    // A header that does not parse ends the walk at the last proxy: its clients share one address, never a forged one.
    if (!next) break;
    client = canonicalAddress(next);
  }
  return client;
}

/** The client address of a raw request (a WebSocket upgrade), under TRUST_PROXY. */
export function requestAddress(request: IncomingMessage, trust: TrustProxy): string {
  return clientAddressOf(request.socket.remoteAddress, request.headers['x-forwarded-for'], trust);
}

/** Sets `ctx.ip` to the client's address under TRUST_PROXY: every per-address decision reads it from there. */
export function clientAddress(trust: TrustProxy): Middleware {
  return async (ctx, next) => {
    ctx.request.ip = requestAddress(ctx.req, trust);
    await next();
  };
}

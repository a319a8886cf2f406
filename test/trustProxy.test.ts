// TRUST_PROXY: every per-address decision (registrations, WebSocket caps, the metadata-document fetch
// budget) reads one client address. Off (the default), X-Forwarded-For is ignored, whatever it says;
// with a hop count or the proxies' addresses, the address the trusted proxies name is the client's.
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshEm } from '../src/db/orm.js';
import { sql } from '../src/db/sql.js';
import { canonicalAddress, clientAddressOf, parseTrustProxy } from '../src/http/clientAddress.js';
import { startTestApp, type TestApp } from './support/app.js';
import { loopbackAddress, postJsonFrom } from './support/oauthClient.js';
import { spawnService } from './support/processes.js';

/** Three apps on one database: no proxy trusted, one hop, and the proxies named by address. */
let off: TestApp;
let oneHop: TestApp;
let named: TestApp;
beforeAll(async () => {
  const oauth = { registrationsPerHour: 2 };
  [off, oneHop, named] = await Promise.all([
    startTestApp({ oauth }),
    startTestApp({ oauth, trustProxy: parseTrustProxy('1') }),
    startTestApp({ oauth, trustProxy: parseTrustProxy('127.0.0.0/8, 10.0.0.0/8') }),
  ]);
});
afterAll(async () => {
  await Promise.all([off, oneHop, named].map((app) => app?.close()));
});

/** A public-looking address of its own (documentation ranges), so counters on a shared database start at zero. */
const somewhere = () => `203.0.${randomInt(0, 256)}.${randomInt(1, 255)}`;

/** Registers a client through `app` from `peer` (the socket's address), sending X-Forwarded-For when given. */
async function register(app: TestApp, peer: string, forwardedFor?: string) {
  const body = JSON.stringify({ client_name: 'proxy test', redirect_uris: ['https://app.example/cb'] });
  const res = await postJsonFrom(
    `${app.url}/oauth/register`,
    body,
    peer,
    'application/json',
    forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
  );
  return { status: res.status, clientId: res.body?.client_id as string | undefined };
}

/** The address a registration was counted and recorded under. */
async function registeredFrom(app: TestApp, clientId: string): Promise<string> {
  const [row] = await sql<{ registered_from: string }>(freshEm(app.server.orm), 'select registered_from from oauth_clients where id = ?', [
    clientId,
  ]);
  return row.registered_from;
}

describe('TRUST_PROXY off (the default)', () => {
  it('ignores a forged X-Forwarded-For: every registration from one peer counts against that peer, whatever the header names', async () => {
    const peer = loopbackAddress();
    const first = await register(off, peer, somewhere());
    const second = await register(off, peer, `${somewhere()}, ${somewhere()}`);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(await registeredFrom(off, first.clientId!)).toBe(peer);
    expect(await registeredFrom(off, second.clientId!)).toBe(peer);
    expect((await register(off, peer, somewhere())).status).toBe(429);
  });
});

describe('TRUST_PROXY on', () => {
  it('a hop count reads the address the last proxy appended; what the client put before it is ignored', async () => {
    const proxy = loopbackAddress();
    const client = somewhere();
    const first = await register(oneHop, proxy, `${somewhere()}, ${client}`);
    const second = await register(oneHop, proxy, `evil, ${somewhere()}, ${client}`);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(await registeredFrom(oneHop, first.clientId!)).toBe(client);
    expect(await registeredFrom(oneHop, second.clientId!)).toBe(client);
    // The client's own limit is spent; another client behind the same proxy has its own.
    expect((await register(oneHop, proxy, `${somewhere()}, ${client}`)).status).toBe(429);
    const other = somewhere();
    const third = await register(oneHop, proxy, other);
    expect(third.status).toBe(201);
    expect(await registeredFrom(oneHop, third.clientId!)).toBe(other);
  });

  it('proxies named by address: the header is read from the right while it names a trusted proxy; a peer that is no proxy is believed about nothing', async () => {
    const client = somewhere();
    // Peer 127.x (trusted) says the request came from 10.1.2.3 (trusted), which says it came from the client.
    const chained = await register(named, loopbackAddress(), `${somewhere()}, ${client}, 10.1.2.3`);
    expect(chained.status).toBe(201);
    expect(await registeredFrom(named, chained.clientId!)).toBe(client);
    // An entry that is not an address ends the walk at the last proxy, never at a forged address.
    const lastProxy = `10.${randomInt(0, 256)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
    const garbled = await register(named, loopbackAddress(), `${somewhere()}, not-an-address, ${lastProxy}`);
    expect(await registeredFrom(named, garbled.clientId!)).toBe(lastProxy);
  });

  it('counts an IPv4-mapped IPv6 address as its IPv4 address: one client, one budget, however a proxy writes it', async () => {
    const client = somewhere();
    const [a, b, c, d] = client.split('.').map(Number);
    const hex = `::ffff:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
    const mapped = await register(oneHop, loopbackAddress(), `::ffff:${client}`);
    const plain = await register(oneHop, loopbackAddress(), client);
    expect([mapped.status, plain.status]).toEqual([201, 201]);
    expect(await registeredFrom(oneHop, mapped.clientId!)).toBe(client);
    expect(await registeredFrom(oneHop, plain.clientId!)).toBe(client);
    // The limit of 2 is spent for the client, whichever spelling comes next.
    expect((await register(oneHop, loopbackAddress(), `::FFFF:${client}`)).status).toBe(429);
    expect((await register(oneHop, loopbackAddress(), hex)).status).toBe(429);
    expect((await register(oneHop, loopbackAddress(), `[::ffff:${client}]:4711`)).status).toBe(429);
    // A trusted proxy written as a mapped address is still the trusted proxy.
    const behind = somewhere();
    const chained = await register(named, loopbackAddress(), `${behind}, ::ffff:10.9.8.7`);
    expect(await registeredFrom(named, chained.clientId!)).toBe(behind);
  });

  it('writes each address one way (mapped IPv4 as IPv4, IPv6 lower-cased and compressed), whatever the peer or header says', () => {
    expect(canonicalAddress('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(canonicalAddress('::ffff:cb00:7107')).toBe('203.0.113.7');
    expect(canonicalAddress('0:0:0:0:0:FFFF:203.0.113.7')).toBe('203.0.113.7');
    expect(canonicalAddress('2001:DB8:0:0::1')).toBe('2001:db8::1');
    expect(canonicalAddress('203.0.113.7')).toBe('203.0.113.7');
    expect(canonicalAddress('unknown')).toBe('unknown');
    expect(clientAddressOf('::ffff:127.0.0.1', undefined, parseTrustProxy('off'))).toBe('127.0.0.1');
    expect(clientAddressOf('::ffff:127.0.0.1', '::ffff:198.51.100.4', parseTrustProxy('127.0.0.1'))).toBe('198.51.100.4');
  });

  it('refuses to start on a TRUST_PROXY that is neither a hop count nor addresses', async () => {
    expect(() => parseTrustProxy('everyone')).toThrow(/hop count or a list of proxy addresses/);
    expect(() => parseTrustProxy('10.0.0.0/33')).toThrow();
    expect(parseTrustProxy('off')).toEqual({ kind: 'off' });
    await expect(spawnService({ TRUST_PROXY: 'yes please' })).rejects.toThrow(/exited with 2[\s\S]*TRUST_PROXY/);
  });
});

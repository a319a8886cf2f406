import { describe, expect, it } from 'vitest';
import { checkDatabaseUrl, parseDatabaseUrl, withoutPassword } from '../../src/db/databaseUrl.js';
import { keeps } from '../../src/db/hostPicking.js';
import { classifyError, signalsLostPrimary } from '../../src/errors.js';
import { ConfigError, loadConfig } from '../../src/config.js';

// libpq's multi-host URLs (several host:port pairs, target_session_attrs): what node-postgres cannot read.
describe('database URLs', () => {
  it('leaves a one-host URL without target_session_attrs to node-postgres as it is', () => {
    expect(parseDatabaseUrl('postgres://u:p@db.example:5433/wks?sslmode=require')).toBeNull();
    expect(parseDatabaseUrl('postgresql://localhost/wks')).toBeNull();
    expect(parseDatabaseUrl('postgres:///wks?host=/var/run/postgresql')).toBeNull();
    expect(parseDatabaseUrl('socket:/var/run/postgresql?db=wks')).toBeNull();
  });

  it('reads the hosts in order, their ports (5432 by default), and what a connection keeps', () => {
    const url = parseDatabaseUrl(
      'postgres://wks:s%40cret@10.0.0.1:5432,db-2,[::1]:6543/wks?target_session_attrs=read-write&application_name=x',
    )!;
    expect(url.hosts).toEqual([
      { host: '10.0.0.1', port: 5432 },
      { host: 'db-2', port: 5432 },
      { host: '::1', port: 6543 },
    ]);
    expect(url.targetSessionAttrs).toBe('read-write');
    // Each host's URL is one node-postgres reads: the same user, password, database and parameters, without those read here.
    expect(url.urlFor(1)).toBe('postgres://wks:s%40cret@db-2:5432/wks?application_name=x');
    expect(url.urlFor(2)).toBe('postgres://wks:s%40cret@[::1]:6543/wks?application_name=x');
  });

  it('takes one host with target_session_attrs too, and defaults to any as libpq does', () => {
    expect(parseDatabaseUrl('postgres://h:1/db?target_session_attrs=standby')!.hosts).toEqual([{ host: 'h', port: 1 }]);
    expect(parseDatabaseUrl('postgres://a,b/db')!.targetSessionAttrs).toBe('any');
  });

  it('reads what pg_autoctl show uri prints', () => {
    const url = parseDatabaseUrl('postgres://127.0.0.1:25434,127.0.0.1:25433/wks?target_session_attrs=read-write&sslmode=prefer')!;
    expect(url.hosts.map((h) => h.port)).toEqual([25434, 25433]);
    expect(url.sslmode).toBe('prefer');
    expect(url.urlFor(0)).toBe('postgres://127.0.0.1:25434/wks');
  });

  it('names the bad part of a bad URL', () => {
    const error = (url: string) => {
      try {
        parseDatabaseUrl(url);
      } catch (e) {
        return (e as Error).message;
      }
      return 'accepted';
    };
    expect(error('mysql://h/db')).toBe('must be a postgres:// or postgresql:// URL');
    expect(error('postgres://a:5432,b:54x2/db')).toBe('has host 2 of 2 ("b:54x2"): the port must be a number from 1 to 65535');
    expect(error('postgres://a:5432,:5433/db')).toBe('has host 2 of 2 (":5433"): the host name is empty');
    expect(error('postgres://a,b:70000/db')).toBe('has host 2 of 2 ("b:70000"): the port must be a number from 1 to 65535');
    expect(error('postgres://a,b/db?target_session_attrs=rw')).toBe(
      'has target_session_attrs=rw: it must be one of any, read-write, read-only, primary, standby, prefer-standby',
    );
    expect(error('postgres://a,b/db?sslmode=maybe')).toMatch(/^has sslmode=maybe: it must be one of disable, allow, prefer/);
    expect(error('postgres://a,b/db?connect_timeout=soon')).toBe('has connect_timeout=soon: it must be a whole number of seconds');
    expect(error('postgres:///db?host=a,b')).toMatch(/host= or port= parameter/);
    expect(error('postgres:///db?host=a&target_session_attrs=read-write')).toMatch(/host= or port= parameter/);
  });

  it('refuses, at start, a URL the service writes to that keeps read-only servers, and never prints a password', () => {
    expect(() => checkDatabaseUrl('postgres://a,b/db?target_session_attrs=prefer-standby', 'write')).toThrow(/service writes there/);
    expect(checkDatabaseUrl('postgres://a,b/db?target_session_attrs=prefer-standby', 'read')).toContain('prefer-standby');
    expect(withoutPassword('postgres://wks:hunter2@a,b/db')).toBe('postgres://wks:***@a,b/db');
    try {
      loadConfig({ DATABASE_URL: 'postgres://wks:hunter2@a:1,b:x/db', DATABASE_READ_URL: 'postgres://a,b/db?target_session_attrs=maybe' });
      throw new Error('accepted');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems).toEqual([
        'DATABASE_URL has host 2 of 2 ("b:x"): the port must be a number from 1 to 65535, got "postgres://wks:***@a:1,b:x/db"',
        'DATABASE_READ_URL has target_session_attrs=maybe: it must be one of any, read-write, read-only, primary, standby, prefer-standby, ' +
          'got "postgres://a,b/db?target_session_attrs=maybe"',
      ]);
    }
  });

  it('keeps the server each target_session_attrs names', () => {
    const primary = { standby: false, readOnly: false };
    const readOnlyPrimary = { standby: false, readOnly: true };
    const standby = { standby: true, readOnly: true };
    expect([primary, readOnlyPrimary, standby].map((k) => keeps('read-write', k, 1))).toEqual([true, false, false]);
    expect([primary, readOnlyPrimary, standby].map((k) => keeps('primary', k, 1))).toEqual([true, true, false]);
    expect([primary, readOnlyPrimary, standby].map((k) => keeps('read-only', k, 1))).toEqual([false, true, true]);
    expect([primary, readOnlyPrimary, standby].map((k) => keeps('standby', k, 1))).toEqual([false, false, true]);
    expect([primary, standby].map((k) => keeps('prefer-standby', k, 1))).toEqual([false, true]);
    expect([primary, standby].map((k) => keeps('prefer-standby', k, 2))).toEqual([true, true]);
    expect(keeps('any', readOnlyPrimary, 1)).toBe(true);
  });
});

describe('what says the primary was lost', () => {
  it('takes dropped connections, shutdowns and read-only refusals, not a server ending one idle connection by its own rule', () => {
    const error = (message: string, code?: string) => Object.assign(new Error(message), { code });
    expect(signalsLostPrimary(error('cannot execute INSERT in a read-only transaction', '25006'))).toBe(true);
    expect(signalsLostPrimary(error('terminating connection due to administrator command', '57P01'))).toBe(true);
    expect(signalsLostPrimary(error('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))).toBe(true);
    expect(signalsLostPrimary(error('Connection terminated unexpectedly'))).toBe(true);
    expect(signalsLostPrimary(error('terminating connection due to idle-session timeout', '57P05'))).toBe(false);
    expect(signalsLostPrimary(error('canceling statement due to statement timeout', '57014'))).toBe(false);
    expect(signalsLostPrimary(error('duplicate key value violates unique constraint', '23505'))).toBe(false);
    expect(signalsLostPrimary(error('Knex: Timeout acquiring a connection. The pool is probably full.'))).toBe(false);
  });
});

describe('what answers 503 rather than 500', () => {
  it('every error that says the primary was lost, a connection that could not be had, or a socket cut under a statement', () => {
    const error = (message: string, code?: string) => Object.assign(new Error(message), { code });
    const unavailable = [
      error('timeout expired'),
      error('the database system is in recovery', '57P03'),
      error('getaddrinfo EAI_AGAIN db', 'EAI_AGAIN'),
      error('connect EHOSTUNREACH 10.0.0.2:5432', 'EHOSTUNREACH'),
      error('cannot execute INSERT in a read-only transaction', '25006'),
      error('terminating connection due to idle-session timeout', '57P05'),
      error('Knex: Timeout acquiring a connection. The pool is probably full.'),
      error('Cannot call write after a stream was destroyed', 'ERR_STREAM_DESTROYED'),
      error('Client was closed and is not queryable'),
      error('Transaction query already complete, run with DEBUG=knex:tx for more info'),
    ];
    for (const e of unavailable) expect([e.message, classifyError(e).code]).toEqual([e.message, 'unavailable']);
    expect(classifyError(error("Cannot read properties of undefined (reading 'id')")).code).toBe('internal');
    expect(classifyError(error('canceling statement due to statement timeout', '57014')).code).toBe('internal');
  });
});

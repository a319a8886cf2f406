import { describe, expect, it } from 'vitest';
import { lsnValue } from '../../src/app/readRouter.js';
import { onlyReads } from '../../src/db/sql.js';
import { mcpMessageReads } from '../../rest/mcp.js';

describe('what may go to a read replica (onlyReads)', () => {
  it('takes plain selects and WITH queries of selects', () => {
    expect(onlyReads('select * from memory_notes where workspace_id = $1 and path = $2')).toBe(true);
    expect(onlyReads('  WITH x as (select 1) select * from x')).toBe(true);
    expect(onlyReads('select updated_at, deleted_at from notes')).toBe(true); // column names that contain verbs
    expect(onlyReads('explain (format json) select 1 from articles a where a.workspace_id = $1')).toBe(true); // a plan, as full text's estimate asks
  });

  it('refuses anything that writes, locks rows, notifies or sets', () => {
    for (const text of [
      'update memory_notes set accessed_at = $1 where id = $2 returning *',
      'insert into search_log values ($1)',
      'delete from events where id = $1',
      'with gone as (delete from x returning id) select count(*) from gone',
      'with up as (update x set a = 1 returning id) select * from up',
      'select * from x for update',
      'select * from x for no key update',
      'select * from x for share',
      "select pg_notify('c', '')",
      "select set_config('a', 'b', true)",
      'select pg_advisory_xact_lock(1)',
      'select pg_try_advisory_xact_lock(1)',
      "select nextval('s')",
      'merge into x using y on true when matched then do nothing',
      'explain (format json) update x set a = 1',
      'explain analyze delete from x',
    ])
      expect(onlyReads(text), text).toBe(false);
  });

  it('compares WAL positions as numbers', () => {
    expect(lsnValue('0/16B3748') < lsnValue('0/16B3750')).toBe(true);
    expect(lsnValue('1/0') > lsnValue('0/FFFFFFFF')).toBe(true);
    expect(lsnValue('A/10')).toBe((10n << 32n) + 16n);
  });
});

describe('which MCP messages only read (mcpMessageReads)', () => {
  const methods: Record<string, string> = { memory_list_notes: 'GET', memory_put_note: 'PUT', articles_create: 'POST' };
  const methodOf = (tool: string) => methods[tool];
  const call = (name: unknown) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } });

  it('takes initialize, ping, tools/list, the resources reads, notifications and calls of GET tools', () => {
    for (const message of [
      { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: {} } },
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', id: 2, method: 'resources/list' },
      { jsonrpc: '2.0', id: 2, method: 'resources/templates/list' },
      { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'wks://workspaces/w/notes/a' } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } },
      call('memory_list_notes'),
    ])
      expect(mcpMessageReads(message, methodOf), JSON.stringify(message)).toBe(true);
  });

  it('refuses calls of tools that write, unknown tools, other methods, and what is not a request', () => {
    for (const message of [
      call('memory_put_note'),
      call('articles_create'),
      call('no_such_tool'),
      call(42),
      { jsonrpc: '2.0', id: 1, method: 'tools/call' },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: null },
      { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: 'wks://workspaces/w/notes/a' } },
      { jsonrpc: '2.0', id: 1, method: 'subscriptions/listen' },
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 1, method: 7 },
      null,
      'tools/list',
    ])
      expect(mcpMessageReads(message, methodOf), JSON.stringify(message)).toBe(false);
  });
});

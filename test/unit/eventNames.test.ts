// The event types and target types are declared once (src/webhooks/events.ts): every one a service
// records is declared, every declared one is recorded, and the console's page carries these very lists.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context } from 'koa';
import { describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../../src/auth/permissions.js';
import { consolePage } from '../../src/app/console.js';
import { EVENT_TYPES, TARGET_TYPES } from '../../src/webhooks/events.js';

const SERVICES = fileURLToPath(new URL('../../src/services/', import.meta.url));
/** Statements that record events (`'…' as action`) may live in the store beside the services. */
const STORE = fileURLToPath(new URL('../../src/store/', import.meta.url));
/** The identity wing records its own events (sign-in, sessions, OAuth grants). */
const IDENTITY = fileURLToPath(new URL('../../src/identity/', import.meta.url));
/** The workspace archive's import records its own (workspace.created, the import's event). */
const ARCHIVE = fileURLToPath(new URL('../../src/archive/', import.meta.url));

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });

/** An event type is `<resource>.<verb>` (other `action`s, such as an article change's 'moved', are not events). */
const EVENT_NAME = /'([a-z_]+(?:\.[a-z_]+)+)'/g;

/**
 * The names the services' and the identity wing's code and the store's statements record, by where each was written:
 * `action: …` in an event's input (every event name in that expression, e.g. both sides of a
 * conditional), the first argument of a `…Event('…', …)` helper, a SQL statement's `'…' as action`,
 * and `targetType: '…'`.
 */
function recorded() {
  const actions = new Map<string, string>();
  const targets = new Map<string, string>();
  for (const [dir, path] of [SERVICES, STORE, IDENTITY, ARCHIVE].flatMap((dir) => sources(dir).map((path) => [dir, path]))) {
    const text = readFileSync(path, 'utf8');
    const file = path.slice(dir.length);
    for (const [, expression] of text.matchAll(/\baction:([^,}\n]*)/g)) {
      for (const [, name] of expression.matchAll(EVENT_NAME)) actions.set(name, file);
    }
    for (const [, name] of text.matchAll(/\b\w+Event\(\s*'([^']*)'/g)) actions.set(name, file);
    for (const [, name] of text.matchAll(/'([^']*)'\s+as\s+action\b/g)) actions.set(name, file);
    for (const [, name] of text.matchAll(/\btargetType:\s*'([^']*)'/g)) targets.set(name, file);
  }
  return { actions, targets };
}

describe('event names, declared once', () => {
  const { actions, targets } = recorded();

  it('finds what the services record (the scan still reads their code)', () => {
    expect(actions.size).toBeGreaterThanOrEqual(30);
    expect(targets.size).toBeGreaterThanOrEqual(10);
    expect(actions.get('memory.note.created')).toBe('memoryNotes.ts'); // written in SQL, out of the type checker's sight
  });

  it('declares every action a service records, and records every one declared', () => {
    const declared = new Set<string>(EVENT_TYPES);
    const undeclared = [...actions].filter(([name]) => !declared.has(name)).map(([name, file]) => `${name} (${file})`);
    expect(undeclared, 'recorded by a service but missing from EVENT_TYPES').toEqual([]);
    expect(
      EVENT_TYPES.filter((name) => !actions.has(name)),
      'in EVENT_TYPES but recorded by no service',
    ).toEqual([]);
    expect(new Set(EVENT_TYPES).size).toBe(EVENT_TYPES.length);
  });

  it('declares every target type a service names, and each one declared is named', () => {
    const declared = new Set<string>(TARGET_TYPES);
    const undeclared = [...targets].filter(([name]) => !declared.has(name)).map(([name, file]) => `${name} (${file})`);
    expect(undeclared, 'named by a service but missing from TARGET_TYPES').toEqual([]);
    expect(
      TARGET_TYPES.filter((name) => !targets.has(name)),
      'in TARGET_TYPES but named by no service',
    ).toEqual([]);
    expect(new Set(TARGET_TYPES).size).toBe(TARGET_TYPES.length);
  });

  it('hands these very lists to the review console on its page', async () => {
    const ctx = { method: 'GET', path: '/console', set: () => undefined, type: '', body: '' } as unknown as Context;
    await consolePage()(ctx, () => Promise.resolve());
    const body = /<body([^>]*)>/.exec(String(ctx.body))![1];
    const listed = (name: string) => new RegExp(`\\bdata-${name}="([^"]*)"`).exec(body)?.[1].split(' ');
    expect(listed('permissions')).toEqual([...PERMISSIONS]);
    expect(listed('event-types')).toEqual([...EVENT_TYPES]);
    expect(listed('target-types')).toEqual([...TARGET_TYPES]);
  });
});

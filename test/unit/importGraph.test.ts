import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The rooms import one way: no two folders import each other, directly or round a circle.
const ROOT = new URL('../../', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(ts|mjs)$/.test(name) ? [path] : [];
  });
}

/**
 * The room of a file: `src/<folder>`, `rest`, `console`, `scripts`; a file at the top of src/ or of
 * the repository is a room of its own (errors.ts and context.ts are the ground floor, server.ts and
 * main.ts the roof; mikro-orm.config.ts sits above db/).
 */
function room(path: string): string {
  const parts = relative(ROOT, path).split('/');
  if (parts[0] === 'src') return `src/${parts[1].replace(/\.(ts|js|mjs)$/, '')}`;
  return parts[0].replace(/\.(ts|js|mjs)$/, '');
}

/** The files the graph reads: src/, rest/, console/, scripts/ and the repository's own top-level modules. */
function graphFiles(): string[] {
  const roots = ['src', 'rest', 'console', 'scripts'].map((r) => join(ROOT, r)).filter((r) => statSync(r, { throwIfNoEntry: false }));
  const top = readdirSync(ROOT)
    .filter((name) => /\.(ts|mjs)$/.test(name))
    .map((name) => join(ROOT, name));
  return [...roots.flatMap(sources), ...top];
}

/** Folder-level imports: from → the rooms it imports (relative imports, type-only ones too: a room that names another's type leans on it). */
export function roomGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of graphFiles()) {
    const from = room(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g)) {
      const target = resolve(dirname(file), m[1] ?? m[2]);
      if (!target.startsWith(ROOT) || relative(ROOT, target).startsWith('node_modules')) continue;
      const to = room(target);
      if (to === from) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from)!.add(to);
    }
  }
  return graph;
}

/** Strongly connected groups of more than one room (Tarjan). */
function circles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    order.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!order.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, order.get(w)!));
    }
    if (low.get(v) === order.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!order.has(v)) visit(v);
  return found;
}

describe('the rooms import one way', () => {
  it('no two folders import each other, directly or round a circle', () => {
    const graph = roomGraph();
    expect(graph.size).toBeGreaterThan(10);
    const mutual = [...graph].flatMap(([from, tos]) =>
      [...tos].filter((to) => from < to && graph.get(to)?.has(from)).map((to) => `${from} ⇄ ${to}`),
    );
    expect(mutual).toEqual([]);
    expect(circles(graph)).toEqual([]);
  });

  it('the lower floors never import the doors', () => {
    const graph = roomGraph();
    const doors = ['rest', 'src/app', 'console'];
    const lower = ['src/store', 'src/db', 'src/services', 'src/resolvers', 'src/auth', 'src/search', 'src/contract'];
    const wrong = lower.flatMap((from) => [...(graph.get(from) ?? [])].filter((to) => doors.includes(to)).map((to) => `${from} → ${to}`));
    expect(wrong).toEqual([]);
  });

  it("the ORM's configuration lives in db/; the file at the root where MikroORM's tools look only hands it on", () => {
    const graph = roomGraph();
    expect([...(graph.get('mikro-orm.config') ?? [])].sort()).toEqual(['src/config', 'src/db']);
    const importers = [...graph].filter(([, tos]) => tos.has('mikro-orm.config')).map(([from]) => from);
    expect(importers).toEqual([]);
  });
});

// The role table is one table in the code (ROLE_TABLE, src/auth/permissions.ts) and the same table in
// README.md: this test renders the code's table and finds it, line for line, in the README.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { effectivePermissions, PERMISSIONS, ROLE_TABLE, ROLES, rolePermissions } from '../../src/auth/permissions.js';

/** The README's rendering of ROLE_TABLE: one row per permission or person action, a ✓ per role allowed. */
function renderRoleTable(): string {
  const head = `| may | ${ROLES.join(' | ')} |`;
  const rule = `|---|${ROLES.map(() => ':-:').join('|')}|`;
  const rows = Object.entries(ROLE_TABLE).map(
    ([what, roles]) => `| \`${what}\` | ${ROLES.map((r) => (roles.includes(r) ? '✓' : '')).join(' | ')} |`,
  );
  return [head, rule, ...rows].join('\n');
}

describe('the role table', () => {
  it('is in README.md exactly as in the code', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(renderRoleTable());
  });

  it('caps keys by the same table, and gives a person their role’s column', () => {
    for (const role of ROLES) {
      expect([...effectivePermissions([...PERMISSIONS], role)].sort()).toEqual(rolePermissions(role).sort());
    }
    expect(rolePermissions('editor')).toEqual(expect.arrayContaining(['proposal.read', 'article.update'])); // an editor reviews
    expect(rolePermissions('editor')).not.toContain('article.publish');
    expect(ROLE_TABLE['members.sign_in_links']).toEqual(['owner']);
  });
});

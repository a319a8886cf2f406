/** The tables of who may call each root operation and of the named policies, written from the schema's declarations (docs/access.md). */
import type { GraphQLSchema } from 'graphql';
import { rootAccess, type Access } from './access.js';
import { POLICIES } from './policies.js';

/** The names of the policies an access form declares. */
function declaredPolicies(access: Access): string[] {
  if (access.form === 'workspace') return access.policies.map((d) => d.policy.name);
  if (access.form === 'person') return (access.policies ?? []).map((p) => p.name);
  return [];
}

/** One access form in words. */
export function describeAccess(access: Access): string {
  const policies = declaredPolicies(access);
  const guarded = policies.length ? `; policies ${policies.map((p) => `\`${p}\``).join(', ')}` : '';
  switch (access.form) {
    case 'workspace': {
      const permissions = access.permissions.length ? access.permissions.map((p) => `\`${p}\``).join(', ') : 'no permission';
      return `a caller of the workspace with ${permissions}${access.adminMayAct ? '; the admin token too' : ''}${guarded}`;
    }
    case 'admin':
      return 'the admin token';
    case 'person':
      return (
        (access.action
          ? `a member whose role allows \`${access.action}\`, in their organization; the admin token`
          : 'any member, in their organization; the admin token') + guarded
      );
    case 'personIn':
      return `a member whose role allows \`${access.action}\` in the workspace \`${access.argument}\` names; the admin token`;
    case 'member':
      return 'a signed-in member';
  }
}

/** The Markdown tables: every named policy with the operations that declare it, then one row per root operation, in schema order. */
export function accessTable(schema: GraphQLSchema): string {
  const ops = rootAccess(schema);
  const policies = Object.values(POLICIES).map((policy) => {
    const by = ops.filter((op) => op.access && declaredPolicies(op.access).includes(policy.name)).map((op) => `\`${op.name}\``);
    return `| \`${policy.name}\` | ${policy.rule} | ${by.join(', ') || '**no operation**'} |`;
  });
  const rows = ops.map((op) => `| ${op.type} | \`${op.name}\` | ${op.access ? describeAccess(op.access) : '**nothing declared**'} |`);
  return [
    '| policy | rule | declared by |',
    '|---|---|---|',
    ...policies,
    '',
    '| type | operation | who may call |',
    '|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

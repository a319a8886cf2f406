/** The table of who may call each root operation, written from the schema's declarations (docs/access.md). */
import type { GraphQLSchema } from 'graphql';
import { rootAccess, type Access } from './access.js';

/** One access form in words. */
export function describeAccess(access: Access): string {
  switch (access.form) {
    case 'workspace': {
      const permissions = access.permissions.length ? access.permissions.map((p) => `\`${p}\``).join(', ') : 'no permission';
      const plus = access.plus ? ', more by its arguments' : '';
      return `a caller of the workspace with ${permissions}${plus}${access.adminMayAct ? '; the admin token too' : ''}`;
    }
    case 'admin':
      return 'the admin token';
    case 'person':
      return access.action
        ? `a member whose role allows \`${access.action}\`, in their organization; the admin token`
        : 'any member, in their organization; the admin token';
    case 'personIn':
      return `a member whose role allows \`${access.action}\` in the workspace \`${access.argument}\` names; the admin token`;
    case 'member':
      return 'a signed-in member';
  }
}

/** The Markdown table: one row per root operation, in schema order. */
export function accessTable(schema: GraphQLSchema): string {
  const rows = rootAccess(schema).map(
    (op) => `| ${op.type} | \`${op.name}\` | ${op.access ? describeAccess(op.access) : '**nothing declared**'} |`,
  );
  return ['| type | operation | who may call |', '|---|---|---|', ...rows, ''].join('\n');
}

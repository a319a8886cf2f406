import { PERMISSIONS, ROLES } from '../auth/permissions.js';
import { PLANS } from '../plans.js';
import { ServiceClient } from './client.js';
import { CliError, positionals, type CliContext, type Command } from './command.js';
import { ask } from './prompt.js';

const MUTATIONS = {
  org: 'mutation($input: CreateOrganizationInput!) { createOrganization(input: $input) { id name plan } }',
  workspace: 'mutation($input: CreateWorkspaceInput!) { createWorkspace(input: $input) { id name } }',
  member: 'mutation($input: CreateMemberInput!) { createMember(input: $input) { id email role } }',
  key: 'mutation($input: CreateAgentKeyInput!) { createAgentKey(input: $input) { key agentKey { id permissions } } }',
};

/** `all`, or a comma-separated list of permission names (checked here, so a typo fails before anything is created). */
export function parsePermissions(text: string): string[] {
  if (text.trim() === 'all') return [...PERMISSIONS];
  const list = [
    ...new Set(
      text
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = list.filter((p) => !(PERMISSIONS as readonly string[]).includes(p));
  if (unknown.length) throw new CliError(`unknown permission(s): ${unknown.join(', ')} (known: ${PERMISSIONS.join(' ')})`, 2);
  if (!list.length) throw new CliError('--permissions names no permission', 2);
  return list;
}

const oneOf = (values: readonly string[]) => (v: string) => (values.includes(v) ? null : `one of: ${values.join(', ')}`);

/** Fills missing names, plan and role: asked on a terminal, defaults otherwise. */
async function settings(ctx: CliContext) {
  const v = ctx.values as Record<string, string | undefined>;
  const fields = [
    { name: 'org-name', label: 'Organization name', default: 'My organization' },
    { name: 'plan', label: `Plan (${PLANS.join('|')})`, default: 'free', check: oneOf(PLANS) },
    { name: 'workspace-name', label: 'Workspace name', default: 'Docs' },
    { name: 'email', label: 'Member e-mail', default: 'admin@example.com' },
    { name: 'role', label: `Member role (${ROLES.join('|')})`, default: 'owner', check: oneOf(ROLES) },
  ].filter((f) => !(v.organization && (f.name === 'org-name' || f.name === 'plan')));
  const missing = fields.filter((f) => v[f.name] === undefined);
  const answers = ctx.stdinIsTTY && !ctx.json && missing.length ? await ask(missing) : missing.map((f) => f.default);
  const chosen: Record<string, string> = {};
  for (const f of fields) chosen[f.name] = v[f.name] ?? answers[missing.indexOf(f)];
  for (const f of fields) {
    const problem = f.check?.(chosen[f.name]);
    if (problem) throw new CliError(`--${f.name}: ${problem}`, 2);
  }
  return chosen;
}

/** A GET that this key may call, for the printed curl line. */
function tryPath(permissions: string[]): string {
  if (permissions.includes('article.read')) return '/workspaces/-/sections';
  if (permissions.includes('changelog.read')) return '/workspaces/-/changelog';
  if (permissions.includes('memory.read')) return '/workspaces/-/memory';
  if (permissions.includes('search.read')) return '/workspaces/-/search?q=docs';
  return '/workspaces/-/openapi';
}

/** `wks init`: organization, workspace, member and a workspace-bound agent key in one go. */
export const initCommand: Command = {
  name: 'init',
  summary:
    'Creates an organization, a workspace, a member and an agent key bound to the workspace (admin GraphQL), then prints the key ' +
    '(shown once), a curl line that uses it, how the member signs in to the console and an MCP client configuration. ' +
    'Missing names are asked for when stdin is a terminal, else defaults are used. With --json prints {organizationId, workspaceId, memberId, key}.',
  options: {
    'org-name': { type: 'string', value: '<name>', description: 'organization name', default: 'My organization' },
    organization: { type: 'string', value: '<id>', description: 'use this existing organization instead of creating one' },
    plan: { type: 'string', value: '<plan>', description: `plan: ${PLANS.join(' | ')}`, default: 'free' },
    'workspace-name': { type: 'string', value: '<name>', description: 'workspace name', default: 'Docs' },
    email: { type: 'string', value: '<email>', description: 'member e-mail', default: 'admin@example.com' },
    role: { type: 'string', value: '<role>', description: `member role: ${ROLES.join(' | ')}`, default: 'owner' },
    'key-name': { type: 'string', value: '<name>', description: 'agent key name', default: 'wks-cli' },
    permissions: { type: 'string', value: '<list>', description: 'comma-separated permissions, or all', default: 'all' },
    'expires-at': { type: 'string', value: '<date>', description: 'key expiry (ISO 8601); default never' },
  },
  async run(ctx) {
    positionals(ctx, initCommand, 0);
    const v = ctx.values as Record<string, string | undefined>;
    const permissions = parsePermissions(v.permissions ?? 'all');
    const client = ServiceClient.from(ctx);
    client.token();
    const s = await settings(ctx);
    let organizationId = v.organization;
    const created: Record<string, string> = {};
    try {
      if (!organizationId) {
        const org = await client.admin<{ createOrganization: { id: string } }>(MUTATIONS.org, {
          input: { name: s['org-name'], plan: s.plan },
        });
        organizationId = created.organizationId = org.createOrganization.id;
      }
      const ws = await client.admin<{ createWorkspace: { id: string } }>(MUTATIONS.workspace, {
        input: { organizationId, name: s['workspace-name'] },
      });
      created.workspaceId = ws.createWorkspace.id;
      const member = await client.admin<{ createMember: { id: string } }>(MUTATIONS.member, {
        input: { organizationId, email: s.email, role: s.role },
      });
      created.memberId = member.createMember.id;
      const key = await client.admin<{ createAgentKey: { key: string } }>(MUTATIONS.key, {
        input: {
          memberId: created.memberId,
          name: v['key-name'] ?? 'wks-cli',
          permissions,
          workspaceId: created.workspaceId,
          expiresAt: v['expires-at'] ?? null,
        },
      });
      const result = { organizationId, workspaceId: created.workspaceId, memberId: created.memberId, key: key.createAgentKey.key };
      ctx.out(ctx.json ? JSON.stringify(result) : describe(client.url, result, s, permissions));
    } catch (error) {
      // Nothing is undone: say what exists so it can be reused (e.g. --organization).
      if (error instanceof CliError && Object.keys(created).length)
        error.message += `\n(already created: ${Object.entries(created)
          .map(([k, id]) => `${k} ${id}`)
          .join(', ')})`;
      throw error;
    }
  },
};

function describe(
  url: string,
  r: { organizationId: string; workspaceId: string; memberId: string; key: string },
  s: Record<string, string>,
  permissions: string[],
): string {
  const mcp = {
    mcpServers: {
      workspace: {
        command: 'npx',
        args: ['-y', 'mcp-remote', `${url}/mcp`, '--header', 'Authorization: Bearer ${WKS_KEY}'],
        env: { WKS_KEY: r.key },
      },
    },
  };
  return [
    `organization  ${r.organizationId}${s['org-name'] ? `  ${s['org-name']} (${s.plan})` : ''}`,
    `workspace     ${r.workspaceId}  ${s['workspace-name']}`,
    `member        ${r.memberId}  ${s.email} (${s.role})`,
    `permissions   ${permissions.length === PERMISSIONS.length ? 'all' : permissions.join(' ')}`,
    '',
    'Agent key (shown only now; store it somewhere safe):',
    `  ${r.key}`,
    '',
    'Try it:',
    `  curl -s '${url}/api/v1${tryPath(permissions)}' -H 'authorization: Bearer ${r.key}'`,
    '',
    `The review console (${url}/console): ${s.email} signs in with a single-use link (valid 15 minutes) from`,
    `  npm run wks -- members login-link ${s.email} --org ${r.organizationId}`,
    '',
    'MCP client (claude_desktop_config.json):',
    JSON.stringify(mcp, null, 2),
  ].join('\n');
}

import { ROLES } from '../auth/permissions.js';
import { PLANS } from '../plans.js';
import { ServiceClient } from './client.js';
import { CliError, positionals, type CliContext, type Command, type OptionDef } from './command.js';
import { parsePermissions } from './init.js';
import { table } from './output.js';

type Values = Record<string, string | boolean | undefined>;

/** A required string option, else a usage error naming it. */
function required(ctx: CliContext, name: string): string {
  const value = ctx.values[name];
  if (typeof value !== 'string' || !value) throw new CliError(`--${name} is required`, 2);
  return value;
}

/** Prints one created object: JSON as the service returned it, or `field  value` lines. */
function print(ctx: CliContext, object: Record<string, unknown>): void {
  if (ctx.json) return ctx.out(JSON.stringify(object));
  ctx.out(
    table(
      ['field', 'value'],
      Object.entries(object).map(([k, v]) => [k, typeof v === 'object' && v !== null ? JSON.stringify(v) : (v as string)]),
    ),
  );
}

/**
 * A `… list` command over an admin connection query: pages through it with `first`/`after` (all
 * pages, or `--limit` items), printing a table, or with `--json` one JSON array of the nodes.
 */
function list(spec: {
  group: string;
  what: string;
  field: string;
  columns: string[];
  filters: Record<string, OptionDef & { variable: string; type: 'string' | 'boolean' }>;
  argTypes: Record<string, string>;
}): Command {
  const options: Record<string, OptionDef> = {
    ...spec.filters,
    limit: { type: 'string', value: '<n>', description: 'at most this many (default: all)' },
  };
  const args = Object.entries(spec.argTypes);
  const document = `query($first: Int, $after: String${args.map(([n, t]) => `, $${n}: ${t}`).join('')}) {
    ${spec.field}(first: $first, after: $after${args.map(([n]) => `, ${n}: $${n}`).join('')}) {
      totalCount pageInfo { hasNextPage endCursor } edges { node { ${spec.columns.join(' ')} } } } }`;
  return {
    name: `${spec.group} list`,
    summary: `Lists ${spec.what}, oldest first (all pages).`,
    options,
    async run(ctx) {
      positionals(ctx, this, 0);
      const limit = ctx.values.limit === undefined ? Infinity : Number(ctx.values.limit);
      if (limit !== Infinity && (!Number.isInteger(limit) || limit < 1)) throw new CliError('--limit must be a positive integer', 2);
      const filters = Object.fromEntries(
        Object.entries(spec.filters)
          .filter(([name]) => ctx.values[name] !== undefined)
          .map(([name, def]) => [def.variable, def.type === 'boolean' ? ctx.values[name] === true : ctx.values[name]]),
      );
      const client = ServiceClient.from(ctx);
      const nodes: Record<string, unknown>[] = [];
      let after: string | null = null;
      let total: number;
      do {
        type Page = {
          totalCount: number;
          pageInfo: { hasNextPage: boolean; endCursor: string | null };
          edges: { node: Record<string, unknown> }[];
        };
        const data: Record<string, Page> = await client.admin(document, { first: Math.min(100, limit - nodes.length), after, ...filters });
        const page: Page = data[spec.field];
        total = page.totalCount;
        nodes.push(...page.edges.map((e) => e.node));
        after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
      } while (after && nodes.length < limit);
      if (ctx.json) return ctx.out(JSON.stringify(nodes));
      const cell = (v: unknown): string =>
        v === null || v === undefined ? '' : Array.isArray(v) ? v.join(',') : typeof v === 'string' ? v : JSON.stringify(v);
      ctx.out(
        table(
          spec.columns,
          nodes.map((n) => spec.columns.map((c) => cell(n[c]))),
        ),
      );
      ctx.out(`${nodes.length} of ${total}`);
    },
  };
}

/** A command that runs one admin mutation and prints its object. */
function mutation(spec: {
  name: string;
  summary: string;
  args?: string;
  options: Record<string, OptionDef>;
  document: string;
  variables(ctx: CliContext, v: Values): Record<string, unknown>;
  /** The object in `data` to print, and how to show it. */
  pick(data: Record<string, unknown>): Record<string, unknown>;
}): Command {
  const command: Command = {
    name: spec.name,
    summary: spec.summary,
    args: spec.args,
    options: spec.options,
    async run(ctx) {
      positionals(ctx, command, spec.args ? spec.args.split(' ').length : 0);
      const variables = spec.variables(ctx, ctx.values);
      const data = await ServiceClient.from(ctx).admin<Record<string, unknown>>(spec.document, variables);
      print(ctx, spec.pick(data));
    },
  };
  return command;
}

const first = (data: Record<string, unknown>) => Object.values(data)[0] as Record<string, unknown>;
const bool = (v: string | boolean | undefined) => (v === undefined ? null : v === true);

const ORG_FIELDS = 'id name plan requireTwoFactor createdAt';
const KEY_FIELDS = 'id name workspaceId permissions expiresAt revokedAt createdAt';

/** orgs, workspaces, members and keys: what admin GraphQL offers today. */
export const ADMIN_COMMANDS: Command[] = [
  mutation({
    name: 'orgs create',
    summary: 'Creates an organization.',
    options: {
      name: { type: 'string', value: '<name>', description: 'organization name (required)' },
      plan: { type: 'string', value: '<plan>', description: `${PLANS.join(' | ')}`, default: 'free' },
      'require-two-factor': { type: 'boolean', description: 'admins and owners must have two-factor on' },
    },
    document: `mutation($input: CreateOrganizationInput!) { createOrganization(input: $input) { ${ORG_FIELDS} } }`,
    variables: (ctx, v) => ({
      input: { name: required(ctx, 'name'), plan: v.plan ?? 'free', requireTwoFactor: bool(v['require-two-factor']) },
    }),
    pick: first,
  }),
  mutation({
    name: 'orgs update',
    summary: "Changes an organization's plan or two-factor rule.",
    args: '<organization>',
    options: {
      plan: { type: 'string', value: '<plan>', description: `${PLANS.join(' | ')}` },
      'require-two-factor': { type: 'boolean', description: 'require two-factor for admins and owners' },
      'no-require-two-factor': { type: 'boolean', description: 'stop requiring two-factor' },
    },
    document: `mutation($id: ID!, $input: UpdateOrganizationInput!) { updateOrganization(id: $id, input: $input) { ${ORG_FIELDS} } }`,
    variables: (ctx, v) => ({
      id: ctx.positionals[0],
      input: { plan: v.plan ?? null, requireTwoFactor: v['require-two-factor'] ? true : v['no-require-two-factor'] ? false : null },
    }),
    pick: first,
  }),
  list({
    group: 'orgs',
    what: 'organizations',
    field: 'organizations',
    columns: ['id', 'name', 'plan', 'createdAt'],
    filters: {},
    argTypes: {},
  }),
  mutation({
    name: 'workspaces create',
    summary: 'Creates a workspace in an organization.',
    options: {
      org: { type: 'string', value: '<id>', description: 'organization id (required)' },
      name: { type: 'string', value: '<name>', description: 'workspace name (required)' },
    },
    document: 'mutation($input: CreateWorkspaceInput!) { createWorkspace(input: $input) { id name organizationId createdAt } }',
    variables: (ctx) => ({ input: { organizationId: required(ctx, 'org'), name: required(ctx, 'name') } }),
    pick: first,
  }),
  list({
    group: 'workspaces',
    what: 'workspaces',
    field: 'workspaces',
    columns: ['id', 'name', 'organizationId', 'createdAt'],
    filters: { org: { type: 'string', value: '<id>', description: 'only this organization', variable: 'organizationId' } },
    argTypes: { organizationId: 'ID' },
  }),
  mutation({
    name: 'members create',
    summary: 'Creates a member of an organization.',
    options: {
      org: { type: 'string', value: '<id>', description: 'organization id (required)' },
      email: { type: 'string', value: '<email>', description: 'e-mail, unique in the organization (required)' },
      role: { type: 'string', value: '<role>', description: `${ROLES.join(' | ')}`, default: 'viewer' },
      'two-factor': { type: 'boolean', description: 'the member has two-factor authentication on' },
    },
    document: 'mutation($input: CreateMemberInput!) { createMember(input: $input) { id email role twoFactorEnabled createdAt } }',
    variables: (ctx, v) => ({
      input: {
        organizationId: required(ctx, 'org'),
        email: required(ctx, 'email'),
        role: v.role ?? 'viewer',
        twoFactorEnabled: bool(v['two-factor']),
      },
    }),
    pick: first,
  }),
  {
    name: 'members login-link',
    summary: 'Mints a single-use sign-in link for a member (valid 15 minutes) and prints it: open it in a browser.',
    args: '<email>',
    options: {
      org: { type: 'string', value: '<id>', description: 'the organization (when the e-mail is a member of several)' },
    },
    async run(ctx) {
      const [email] = positionals(ctx, this, 1);
      const client = ServiceClient.from(ctx);
      const data = await client.admin<{ createSignInLink: Record<string, string> }>(
        'mutation($email: String!, $org: ID) { createSignInLink(email: $email, organizationId: $org) { url memberId email organizationId expiresAt } }',
        { email, org: ctx.values.org ?? null },
      );
      const link = data.createSignInLink;
      // Without PUBLIC_URL the service answers a path: the link is on the URL this command used.
      const url = link.url.startsWith('/') ? `${client.url}${link.url}` : link.url;
      if (ctx.json) return ctx.out(JSON.stringify({ ...link, url }));
      ctx.out(url);
      ctx.out(`for ${link.email}, single use, valid until ${link.expiresAt}`);
    },
  },
  list({
    group: 'members',
    what: 'members',
    field: 'members',
    columns: ['id', 'email', 'role', 'twoFactorEnabled', 'organizationId'],
    filters: {
      org: { type: 'string', value: '<id>', description: 'only this organization', variable: 'organizationId' },
      role: { type: 'string', value: '<role>', description: `only this role (${ROLES.join(' | ')})`, variable: 'role' },
    },
    argTypes: { organizationId: 'ID', role: 'String' },
  }),
  mutation({
    name: 'keys create',
    summary: 'Creates an agent key for a member and prints it (the key is shown only once).',
    options: {
      member: { type: 'string', value: '<id>', description: 'member id (required)' },
      name: { type: 'string', value: '<name>', description: 'key name (the author of what it writes)', default: 'wks-cli' },
      permissions: { type: 'string', value: '<list>', description: 'comma-separated permissions, or all', default: 'all' },
      workspace: { type: 'string', value: '<id>', description: 'bind the key to this workspace; omit for an org-wide key' },
      'expires-at': { type: 'string', value: '<date>', description: 'expiry (ISO 8601); default never' },
    },
    document: `mutation($input: CreateAgentKeyInput!) { createAgentKey(input: $input) { key agentKey { ${KEY_FIELDS} } } }`,
    variables: (ctx, v) => ({
      input: {
        memberId: required(ctx, 'member'),
        name: v.name ?? 'wks-cli',
        permissions: parsePermissions(typeof v.permissions === 'string' ? v.permissions : 'all'),
        workspaceId: v.workspace ?? null,
        expiresAt: v['expires-at'] ?? null,
      },
    }),
    pick: (data) => {
      const created = first(data) as { key: string; agentKey: Record<string, unknown> };
      return { key: created.key, ...created.agentKey };
    },
  }),
  mutation({
    name: 'keys revoke',
    summary: 'Revokes an agent key: it stops working at once (revoking twice keeps the first time).',
    args: '<key-id>',
    options: {},
    document: `mutation($id: ID!) { revokeAgentKey(id: $id) { ${KEY_FIELDS} } }`,
    variables: (ctx) => ({ id: ctx.positionals[0] }),
    pick: first,
  }),
  list({
    group: 'keys',
    what: 'agent keys (never their secrets)',
    field: 'agentKeys',
    columns: ['id', 'name', 'workspaceId', 'permissions', 'lastUsedAt', 'expiresAt', 'revokedAt'],
    filters: {
      org: { type: 'string', value: '<id>', description: 'only this organization', variable: 'organizationId' },
      member: { type: 'string', value: '<id>', description: "only this member's keys", variable: 'memberId' },
      workspace: { type: 'string', value: '<id>', description: 'only keys bound to this workspace', variable: 'workspaceId' },
      revoked: { type: 'boolean', description: 'only revoked keys', variable: 'revoked' },
    },
    argTypes: { organizationId: 'ID', memberId: 'ID', workspaceId: 'ID', revoked: 'Boolean' },
  }),
];

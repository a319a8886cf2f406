import { readFile } from 'node:fs/promises';
import { ServiceClient } from './client.js';
import { CliError, positionals, type CliContext, type Command, type OptionDef } from './command.js';
import { table } from './output.js';

interface SyncPlan {
  added: string[];
  changed: string[];
  removed: string[];
  unchanged: number;
  drifted: { slug: string; operationKey: string; reason: string }[];
}

interface SpecStatus {
  source: string;
  url: string | null;
  title: string | null;
  version: string | null;
  openapiVersion: string | null;
  operationCount: number;
  pageCount: number;
  lastSyncAt: string | null;
  lastSyncResult: string | null;
  lastSync: SyncPlan | null;
  warnings: unknown[];
}

const KEY_OPTION: Record<string, OptionDef> = {
  key: { type: 'string', value: '<svc_pat_…>', env: 'WKS_KEY', description: 'agent key with openapi.manage (openapi.read for status)' },
};

const NOTES =
  'The spec endpoints are agent operations (REST /api/v1/workspaces/{workspace}/openapi…), so they need an agent key, not the admin ' +
  'token: create one with `wks init` or `wks keys create --permissions openapi.read,openapi.manage`. <workspace> is a workspace id, ' +
  'or - for the workspace the key is bound to. A source starting with http:// or https:// is fetched by the service; anything else ' +
  'is read as a file (JSON or YAML) and sent as the spec.';

function agentKey(ctx: CliContext): string {
  const key = (typeof ctx.values.key === 'string' && ctx.values.key) || ctx.env.WKS_KEY;
  if (!key) throw new CliError('an agent key is needed: pass --key or set WKS_KEY', 2);
  return key;
}

/** The plan as a table: one row per page that changes, plus the unchanged count. */
export function planTable(plan: SyncPlan): string {
  const rows: string[][] = [
    ...plan.added.map((p) => ['added', p, '']),
    ...plan.changed.map((p) => ['changed', p, '']),
    ...plan.removed.map((p) => ['removed', p, '']),
    ...plan.drifted.map((d) => ['drifted', d.slug, `${d.operationKey}: ${d.reason} (detached page, left as is)`]),
  ];
  const summary =
    `${plan.added.length} added, ${plan.changed.length} changed, ${plan.removed.length} removed, ${plan.unchanged} unchanged, ` +
    `${plan.drifted.length} drifted`;
  return rows.length ? `${table(['change', 'page', 'note'], rows)}\n${summary}` : `nothing to change: ${summary}`;
}

async function attach(ctx: CliContext, workspace: string, source: string): Promise<SpecStatus> {
  const body = /^https?:\/\//i.test(source) ? { url: source } : { spec: await readSpec(source) };
  return ServiceClient.from(ctx).rest<SpecStatus>('PUT', `/workspaces/${encodeURIComponent(workspace)}/openapi`, agentKey(ctx), body);
}

async function readSpec(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, 2);
  }
}

function describeStatus(status: SpecStatus): string {
  return [
    `spec       ${status.title ?? '(untitled)'} ${status.version ?? ''} (OpenAPI ${status.openapiVersion ?? '?'}, ` +
      `${status.source}${status.url ? ` ${status.url}` : ''})`,
    `operations ${status.operationCount}, pages ${status.pageCount}, last sync ${status.lastSyncAt ?? 'never'} (${status.lastSyncResult ?? '-'})`,
    ...status.warnings.map((w) => `warning    ${typeof w === 'string' ? w : JSON.stringify(w)}`),
  ].join('\n');
}

const attachCommand: Command = {
  name: 'spec attach',
  summary: 'Attaches (or replaces) the OpenAPI spec of a workspace from a file or URL, generates its pages and prints the sync plan.',
  args: '<workspace> <file|url>',
  notes: NOTES,
  options: KEY_OPTION,
  async run(ctx) {
    const [workspace, source] = positionals(ctx, attachCommand, 2);
    const status = await attach(ctx, workspace, source);
    ctx.out(ctx.json ? JSON.stringify(status) : `${describeStatus(status)}\n\n${status.lastSync ? planTable(status.lastSync) : ''}`);
  },
};

const syncCommand: Command = {
  name: 'spec sync',
  summary:
    'Regenerates the pages from the attached spec and prints the plan; with a file or URL, attaches that version first (the same as attach).',
  args: '<workspace> [file|url]',
  notes: NOTES,
  options: KEY_OPTION,
  async run(ctx) {
    const [workspace, source] = positionals(ctx, syncCommand, 1, 2);
    const plan = source
      ? (await attach(ctx, workspace, source)).lastSync
      : await ServiceClient.from(ctx).rest<SyncPlan>('POST', `/workspaces/${encodeURIComponent(workspace)}/openapi/sync`, agentKey(ctx));
    if (!plan) throw new CliError('the service answered without a sync plan');
    ctx.out(ctx.json ? JSON.stringify(plan) : planTable(plan));
  },
};

const statusCommand: Command = {
  name: 'spec status',
  summary: 'Shows the attached spec of a workspace and its last sync plan.',
  args: '<workspace>',
  notes: NOTES,
  options: KEY_OPTION,
  async run(ctx) {
    const [workspace] = positionals(ctx, statusCommand, 1);
    const status = await ServiceClient.from(ctx).rest<SpecStatus>(
      'GET',
      `/workspaces/${encodeURIComponent(workspace)}/openapi`,
      agentKey(ctx),
    );
    ctx.out(ctx.json ? JSON.stringify(status) : `${describeStatus(status)}${status.lastSync ? `\n\n${planTable(status.lastSync)}` : ''}`);
  },
};

export const SPEC_COMMANDS: Command[] = [attachCommand, syncCommand, statusCommand];

import { MAX_BYTES } from '../src/contract/jsonSchema.js';
import { BODY_LIMITS } from '../src/contract/rules.js';
import type { CompiledRoute } from './compile.js';
import type { JsonSchema } from './jsonSchema.js';
import { API_PREFIX } from './openapi.js';
import type { ParamDef } from './routeDefinition.js';

/** What /llms.txt says about the service beyond its endpoints. */
export interface LlmsAbout {
  version: string;
  rateLimit?: { max: number; windowSeconds: number };
}

/**
 * `/llms.txt` (the llmstxt.org convention): an index of the API for agents, generated from the
 * compiled route table — each endpoint with its summary, permissions and limits, grouped by tag —
 * and links to the OpenAPI document, the API reference page and the MCP endpoint.
 */
export function buildLlmsTxt(routes: CompiledRoute[], about: LlmsAbout): string {
  const lines = [
    '# Workspace Knowledge Service',
    '',
    '> A documentation workspace for AI agents and people: articles in sections, edit proposals, shared memory notes, a changelog, ' +
      'full-text and semantic search, content-gap reports, image uploads and API-reference pages generated from an OpenAPI spec. ' +
      `REST under ${API_PREFIX}; every call sends \`Authorization: Bearer svc_pat_…\` (an agent key).`,
    '',
    `- [OpenAPI document](${API_PREFIX}/openapi.json): the contract, with an example request and response for every operation`,
    '- [API reference](/docs): the same document, rendered for people',
    "- MCP: `POST /mcp` (Model Context Protocol, Streamable HTTP); its tools are these endpoints, filtered by the key's permissions",
    `- Workspace: \`{workspace}\` is a workspace id, or \`-\` for the workspace the key is bound to`,
    '- Errors: `{"error":{"code","message","status","details"}}`; 400 `details` names each bad field',
    ...(about.rateLimit
      ? [`- Rate limit: ${about.rateLimit.max} requests per ${about.rateLimit.windowSeconds} s per key (429 with \`Retry-After\`)`]
      : []),
    `- Bodies: JSON up to ${kib(BODY_LIMITS.json)} unless an endpoint says otherwise; lists are cursor-paginated (\`Link: <…>; rel="next"\`)`,
    '- Retries: send `Idempotency-Key` on writes to make them safe to retry for 24 h',
    '',
  ];
  const tags = [...new Set(routes.map((c) => c.route.tag))];
  for (const tag of tags) {
    lines.push(`## ${tag}`, '');
    for (const compiled of routes.filter((c) => c.route.tag === tag)) lines.push(endpointLine(compiled));
    lines.push('');
  }
  lines.push(`Version ${about.version}.`, '');
  return lines.join('\n');
}

function endpointLine({ route, pathParams, permissionsText }: CompiledRoute): string {
  const limits = [
    ...Object.entries({ ...pathParams, ...(route.query ?? {}) })
      .filter(([name]) => !OBVIOUS.has(name))
      .flatMap(([name, def]) => limitOf(name, def.schema, def)),
    ...Object.entries(route.body?.schema.properties ?? {}).flatMap(([name, schema]) => limitOf(name, schema)),
    ...(route.body?.maxBytes ? [`body ≤ ${kib(route.body.maxBytes)}`] : []),
    ...(route.upload ? [`\`${route.upload.field}\` ≤ ${kib(route.upload.maxBytes)}`] : []),
  ];
  return (
    `- \`${route.method} ${API_PREFIX}${route.path}\` (\`${route.name}\`): ${route.summary}. ` +
    `Permissions: ${permissionsText.replace(/\.$/, '')}.` +
    (limits.length ? ` Limits: ${limits.join('; ')}.` : '')
  );
}

/** Parameters every agent gets right without being told (an id or `-`, an opaque cursor). */
const OBVIOUS = new Set(['workspace', 'cursor']);

/** A parameter's or field's bounds in words (`limit` 1–100, default 20; `title` ≤ 200 chars), if it has any. */
function limitOf(name: string, schema: JsonSchema, def?: ParamDef): string[] {
  const s = (schema.type === 'array' ? { ...schema, ...(schema.items as JsonSchema) } : schema) as Record<string, number | undefined>;
  const parts: string[] = [];
  if (s.maximum === 2147483647) return []; // an id: any positive int4
  if (s.minimum !== undefined && s.maximum !== undefined) parts.push(`${s.minimum}–${s.maximum}`);
  else if (s.maximum !== undefined) parts.push(`≤ ${s.maximum}`);
  if (s[MAX_BYTES] !== undefined) parts.push(`≤ ${s[MAX_BYTES]} bytes (UTF-8)`);
  else if (s.maxLength !== undefined) parts.push(`≤ ${s.maxLength} chars`);
  if (schema.maxItems !== undefined) parts.push(`≤ ${schema.maxItems as number} items`);
  if (schema.default !== undefined && def) parts.push(`default ${JSON.stringify(schema.default)}`);
  return parts.length ? [`\`${name}\` ${parts.join(', ')}`] : [];
}

const kib = (bytes: number) => (bytes >= 1024 * 1024 ? `${Math.round(bytes / 1024 / 1024)} MiB` : `${Math.round(bytes / 1024)} KiB`);

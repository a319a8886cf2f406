/** Renders one operation as a Markdown page: description, parameters, bodies, responses, example. */
export interface RenderInput {
  method: string;
  path: string;
  op: Record<string, any>;
  parameters: Record<string, any>[];
  api: Record<string, any>;
  isSwagger: boolean;
  title: string;
}

const MAX_SCHEMA_DEPTH = 6;

export function renderOperation({ method, path, op, parameters, api, isSwagger, title }: RenderInput): string {
  const out: string[] = [`# ${title}`, '', `\`${method.toUpperCase()} ${path}\``, ''];
  if (op.deprecated) out.push('> **Deprecated.**', '');
  if (op.description) out.push(String(op.description).trim(), '');
  const params = parameters.filter((p) => p && p.in !== 'body');
  if (params.length) {
    out.push('## Parameters', '', '| Name | In | Type | Required | Description |', '|---|---|---|---|---|');
    for (const p of params) out.push(`| \`${p.name}\` | ${p.in} | ${typeName(p.schema ?? p)} | ${p.required ? 'yes' : 'no'} | ${cell(p.description)} |`);
    out.push('');
  }
  const body = isSwagger ? parameters.find((p) => p?.in === 'body') : op.requestBody;
  if (body) {
    out.push('## Request body', '');
    if (body.description) out.push(String(body.description).trim(), '');
    if (isSwagger) out.push('```json', JSON.stringify(schemaSketch(body.schema, 0, new WeakSet()), null, 2), '```', '');
    else for (const [type, media] of Object.entries<Record<string, any>>(body.content ?? {})) out.push(`\`${type}\`${body.required ? ' (required)' : ''}`, '', '```json', JSON.stringify(schemaSketch(media.schema, 0, new WeakSet()), null, 2), '```', '');
  }
  const responses = Object.entries<Record<string, any>>(op.responses ?? {});
  if (responses.length) {
    out.push('## Responses', '');
    for (const [status, res] of responses) {
      out.push(`### ${status}`, '', cell(res?.description) || '—', '');
      const schemas = isSwagger ? (res?.schema ? [['application/json', { schema: res.schema }]] : []) : Object.entries<Record<string, any>>(res?.content ?? {});
      for (const [type, media] of schemas as [string, Record<string, any>][]) {
        if (!media?.schema) continue;
        out.push(`\`${type}\``, '', '```json', JSON.stringify(schemaSketch(media.schema, 0, new WeakSet()), null, 2), '```', '');
      }
    }
  }
  out.push('## Example request', '', '```sh', exampleCurl(method, path, params, api, isSwagger, Boolean(body)), '```', '');
  return out.join('\n');
}

function exampleCurl(method: string, path: string, params: Record<string, any>[], api: Record<string, any>, isSwagger: boolean, hasBody: boolean): string {
  const base = isSwagger ? `${(api.schemes?.[0] ?? 'https')}://${api.host ?? 'api.example.com'}${api.basePath ?? ''}` : String(api.servers?.[0]?.url ?? 'https://api.example.com');
  const filled = path.replace(/\{(\w+)\}/g, (_m, name) => `<${name}>`);
  const query = params.filter((p) => p.in === 'query' && p.required).map((p) => `${p.name}=<${p.name}>`).join('&');
  const lines = [`curl -X ${method.toUpperCase()} '${base.replace(/\/$/, '')}${filled}${query ? `?${query}` : ''}'`];
  for (const h of params.filter((p) => p.in === 'header')) lines.push(`  -H '${h.name}: <${h.name}>'`);
  if (hasBody) lines.push(`  -H 'content-type: application/json'`, `  -d '{…}'`);
  return lines.join(' \\\n');
}

/** A compact example-like view of a schema (types and nesting), bounded in depth and cycle-safe. */
function schemaSketch(schema: any, depth: number, seen: WeakSet<object>): unknown {
  if (!schema || typeof schema !== 'object') return 'any';
  if (schema.$ref) return `<${String(schema.$ref).split('/').pop()}>`;
  if (seen.has(schema) || depth > MAX_SCHEMA_DEPTH) return '…';
  seen.add(schema);
  try {
    const variants = schema.oneOf ?? schema.anyOf;
    if (Array.isArray(variants)) return { oneOf: variants.map((v: unknown) => schemaSketch(v, depth + 1, seen)) };
    if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map((s: unknown) => schemaSketch(s, depth + 1, seen)).filter((s: unknown) => s && typeof s === 'object'));
    if (schema.type === 'array' || schema.items) return [schemaSketch(schema.items, depth + 1, seen)];
    if (schema.type === 'object' || schema.properties) {
      const required = new Set<string>(schema.required ?? []);
      return Object.fromEntries(Object.entries<unknown>(schema.properties ?? {}).map(([k, v]) => [required.has(k) ? k : `${k}?`, schemaSketch(v, depth + 1, seen)]));
    }
    return typeName(schema);
  } finally {
    seen.delete(schema);
  }
}

function typeName(schema: any): string {
  if (!schema) return 'any';
  const type = Array.isArray(schema.type) ? schema.type.join(' | ') : schema.type ?? (schema.properties ? 'object' : 'any');
  const detail = schema.enum ? ` (${schema.enum.slice(0, 8).join(', ')})` : schema.format ? ` (${schema.format})` : '';
  return type === 'array' ? `array of ${typeName(schema.items)}` : `${type}${detail}`;
}

function cell(text: unknown): string {
  return text ? String(text).replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|').trim() : '';
}

import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? addFormatsModule) as FormatsPlugin;

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  components: Record<string, Record<string, unknown>>;
  servers: { url: string }[];
};

/**
 * Checks every REST response against the served OpenAPI document: the status must be declared
 * for the operation and the JSON body must validate against its schema (no undocumented fields).
 */
export class OpenApiChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly cache = new Map<string, ValidateFunction>();
  private readonly templates: { method: string; template: string; re: RegExp }[] = [];
  private readonly prefix: string;

  constructor(private readonly doc: Doc) {
    addFormats(this.ajv);
    this.prefix = doc.servers[0].url;
    for (const [template, ops] of Object.entries(doc.paths)) {
      for (const method of Object.keys(ops)) {
        this.templates.push({ method: method.toUpperCase(), template, re: new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`) });
      }
    }
  }

  /** Throws when a response to a documented operation is not what the document says. */
  check(method: string, url: string, status: number, contentType: string | null, body: unknown): void {
    // The path as sent (not through URL, which would resolve `..` segments away).
    const path = url.replace(/^[a-z]+:\/\/[^/]+/, '').split(/[?#]/)[0];
    if (!path.startsWith(`${this.prefix}/`)) return;
    const rel = path.slice(this.prefix.length);
    const match = this.templates.find((t) => t.method === method.toUpperCase() && t.re.test(rel));
    if (!match) return; // not an operation of the document (unknown routes are tested on their own)
    const where = `${method} ${rel} → ${status}`;
    let response = this.doc.paths[match.template][match.method.toLowerCase()].responses[String(status)] as
      Record<string, unknown> | undefined;
    if (!response) throw new Error(`${where}: status ${status} is not declared in the OpenAPI document`);
    response = this.deref(response) as Record<string, unknown>;
    const content = response.content as Record<string, { schema: unknown }> | undefined;
    if (!content) return;
    if (!contentType?.includes('application/json')) throw new Error(`${where}: expected JSON, got ${contentType}`);
    const key = `${match.method} ${match.template} ${status}`;
    let validate = this.cache.get(key);
    if (!validate) {
      validate = this.ajv.compile(this.deref(content['application/json'].schema) as object);
      this.cache.set(key, validate);
    }
    if (!validate(body))
      throw new Error(
        `${where}: body does not match the document: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`,
      );
  }

  private deref(node: unknown): unknown {
    if (Array.isArray(node)) return node.map((n) => this.deref(n));
    if (!node || typeof node !== 'object') return node;
    const ref = (node as { $ref?: string }).$ref;
    if (ref) {
      const target = ref
        .slice(2)
        .split('/')
        .reduce<unknown>((acc, part) => (acc as Record<string, unknown>)[part], this.doc);
      return this.deref(target);
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, this.deref(v)]));
  }
}

import { describeRule, type Rule } from './rules.js';

export type JsonSchema = Record<string, unknown>;

/** The schema extension that carries a string's bound in UTF-8 bytes (JSON Schema counts characters only). */
export const MAX_BYTES = 'x-max-bytes';

/**
 * The JSON Schema of a rule (for REST's validation, the OpenAPI document and the MCP tool
 * schemas); `extra` adds keywords, and its description is followed by the rule in words.
 */
export function schemaOf(rule: Rule, extra: JsonSchema = {}): JsonSchema {
  return { ...ruleSchema(rule), ...extra, description: withLimit(extra.description as string | undefined, rule) };
}

/** A description followed by the rule in words. */
export function withLimit(description: string | undefined, rule: Rule): string {
  return [description, describeRule(rule)].filter(Boolean).join(' ');
}

/** The JSON Schema keywords of a rule, without a description. */
export function ruleSchema(rule: Rule): JsonSchema {
  switch (rule.kind) {
    case 'string':
      return {
        type: 'string',
        ...(rule.minLength ? { minLength: rule.minLength } : {}),
        // A string of N bytes has at most N characters: the byte bound is a character bound too, and
        // `x-max-bytes` says it is bytes that count (REST's refusals then say bytes, like GraphQL's).
        maxLength: Math.min(rule.maxLength, rule.maxBytes ?? Infinity),
        ...(rule.maxBytes !== undefined ? { [MAX_BYTES]: rule.maxBytes } : {}),
        ...(rule.pattern ? { pattern: rule.pattern.source } : {}),
        ...(rule.oneOf ? { enum: [...rule.oneOf] } : {}),
        ...(rule.format ? { format: rule.format } : {}),
      };
    case 'list':
      return { type: 'array', maxItems: rule.maxItems, items: ruleSchema(rule.items) };
    case 'int':
      return {
        type: 'integer',
        minimum: rule.minimum,
        maximum: rule.maximum,
        ...(rule.default === undefined ? {} : { default: rule.default }),
      };
    case 'json':
      return { type: ['string', 'object'], maxLength: rule.maxBytes, [MAX_BYTES]: rule.maxBytes };
  }
}

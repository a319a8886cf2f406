import {
  getNamedType,
  getNullableType,
  isInputObjectType,
  isListType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLFieldResolver,
  type GraphQLInputField,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';
import { InvalidRequestError, type FieldIssue } from '../errors.js';
import { checkRule, wellFormed } from './check.js';
import { declaredRules } from './declared.js';
import { describeRule, RULES, type Rule, type RuleName } from './rules.js';

/** Arguments that mean the same on every field, by name (an `id` that is an Int is an entry id). */
const COMMON_ARGUMENTS: Record<string, RuleName> = {
  workspace: 'workspace',
  slug: 'slug',
  cursor: 'cursor',
  id: 'id',
  position: 'position',
};
const COMMON_INT_ARGUMENTS: Record<string, RuleName> = { id: 'entryId', position: 'position' };

/** Scalars that carry client-sized text (enums, Boolean, Int, Float and DateTime are bounded by their coercion). */
const SIZED_SCALARS = new Set(['String', 'ID', 'JSON']);

/** The rule bound to each argument and input field of the built schema. */
const bound = new WeakMap<GraphQLArgument | GraphQLInputField, Rule>();

/**
 * Binds the input contract to a built schema: every argument and input field that carries a
 * string, an ID, JSON or a list gets its rule (a missing one fails the start), its description
 * states the rule, and every field with arguments checks them before its resolver runs, so
 * GraphQL, and REST and MCP which execute the same schema, refuse the same input alike (NUL
 * anywhere in a string included) and store the same text (unpaired surrogates as U+FFFD).
 */
export function applyInputContract(schema: GraphQLSchema): void {
  const declared = declaredRules();
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    if (isInputObjectType(type)) {
      const own = declared.inputs.get(type.name);
      for (const field of Object.values(type.getFields())) bind(field, own?.get(field.name), `${type.name}.${field.name}`);
    } else if (isObjectType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (!field.args.length) continue;
        const own = declared.args.get(field.name);
        for (const arg of field.args) bind(arg, argumentRule(own, arg), `${type.name}.${field.name}(${arg.name}:)`);
        guard(field);
      }
    }
  }
}

/** An argument's declared rule (`@InputRule` beside its `@Arg`), or the one every argument of its name has. */
function argumentRule(own: Map<string, RuleName> | undefined, arg: GraphQLArgument): RuleName | undefined {
  const rule = own?.get(arg.name);
  if (rule) return rule;
  const named = getNamedType(arg.type).name;
  return named === 'Int' ? COMMON_INT_ARGUMENTS[arg.name] : COMMON_ARGUMENTS[arg.name];
}

function bind(target: GraphQLArgument | GraphQLInputField, name: RuleName | undefined, where: string): void {
  const rule = name ? (RULES as Record<string, Rule>)[name] : undefined;
  if (name && !rule) throw new Error(`input contract: ${where} names an unknown rule ${name}`);
  if (!rule) {
    if (needsRule(target.type)) throw new Error(`input contract: ${where} carries client-sized input but has no rule`);
    return;
  }
  if (!fits(rule, target.type)) throw new Error(`input contract: rule ${name} (${rule.kind}) does not fit ${where}`);
  bound.set(target, rule);
  target.description = [target.description, describeRule(rule)].filter(Boolean).join(' ');
}

function needsRule(type: GraphQLInputType): boolean {
  const inner = getNullableType(type);
  if (isListType(inner)) return true;
  return isScalarType(inner) && SIZED_SCALARS.has(inner.name);
}

function fits(rule: Rule, type: GraphQLInputType): boolean {
  const inner = getNullableType(type);
  const named = getNamedType(type).name;
  if (rule.kind === 'list') return isListType(inner);
  if (isListType(inner)) return false;
  if (rule.kind === 'int') return named === 'Int';
  if (rule.kind === 'json') return named === 'JSON';
  return named === 'String' || named === 'ID';
}

/**
 * Makes the field check its arguments (and their input objects' fields) before its resolver (a
 * subscription: before it subscribes), once their text is well-formed: an unpaired surrogate
 * becomes U+FFFD here, as the database would store it, so every door answers what is stored.
 */
function guard(field: GraphQLField<unknown, unknown>): void {
  const args = field.args;
  const checked =
    (run: GraphQLFieldResolver<unknown, unknown>): GraphQLFieldResolver<unknown, unknown> =>
    (source, values, context, info) => {
      const issues: FieldIssue[] = [];
      const given = values as Record<string, unknown>;
      for (const arg of args) {
        const value = wellFormed(given[arg.name]);
        if (value !== given[arg.name]) given[arg.name] = value;
        checkInput(arg, value, arg.name, issues, true);
      }
      if (issues.length) throw new InvalidRequestError(issues.map((i) => `${i.field}: ${i.message}`).join('; '), issues);
      return run(source, values, context, info);
    };
  if (field.subscribe) field.subscribe = checked(field.subscribe);
  else if (field.resolve) field.resolve = checked(field.resolve);
}

/** Checks one value; an input object's fields are named on their own at the top level (`path`, not `input.path`). */
function checkInput(target: GraphQLArgument | GraphQLInputField, value: unknown, field: string, issues: FieldIssue[], top: boolean): void {
  if (value === null || value === undefined) return;
  const rule = bound.get(target);
  if (rule) {
    checkRule(rule, value, field, issues);
    return;
  }
  const named = getNamedType(target.type);
  if (!isInputObjectType(named) || typeof value !== 'object') return;
  for (const inner of Object.values(named.getFields())) {
    checkInput(inner, (value as Record<string, unknown>)[inner.name], top ? inner.name : `${field}.${inner.name}`, issues, false);
  }
}

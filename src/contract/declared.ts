/**
 * Where input rules are declared: `@InputRule('notePath')` beside the `@Field` of an input or args
 * class, or beside the `@Arg` of a resolver argument. applyInputContract (graphql.ts) reads the
 * declarations back through type-graphql's metadata, keyed the way the built schema names them.
 */
import { getMetadataStorage } from 'type-graphql';
import type { RuleName } from './rules.js';

/** A class (its constructor), as decorators and type-graphql's metadata name it. */
type Class = object;

/** class → property → rule (input and args classes). */
const propertyRules = new Map<Class, Map<string, RuleName>>();
/** resolver class → method → parameter index → rule. */
const parameterRules = new Map<Class, Map<string, Map<number, RuleName>>>();

/** Declares the input rule of an input field, an args-class field or a resolver argument. */
export function InputRule(rule: RuleName) {
  return (prototype: object, key: string | symbol | undefined, index?: unknown): void => {
    const owner = (prototype as { constructor: Class }).constructor;
    const name = String(key);
    if (typeof index === 'number') {
      const methods = parameterRules.get(owner) ?? new Map<string, Map<number, RuleName>>();
      parameterRules.set(owner, methods);
      methods.set(name, (methods.get(name) ?? new Map<number, RuleName>()).set(index, rule));
    } else {
      propertyRules.set(owner, (propertyRules.get(owner) ?? new Map<string, RuleName>()).set(name, rule));
    }
  };
}

/** Declared rules by schema names: arguments by field name, then argument name; input fields by type name, then field name. */
export interface DeclaredRules {
  args: Map<string, Map<string, RuleName>>;
  inputs: Map<string, Map<string, RuleName>>;
}

/** Reads every declaration back, named as the built schema names its fields and arguments. */
export function declaredRules(): DeclaredRules {
  const storage = getMetadataStorage();
  const schemaNameOf = (target: Class, property: string) =>
    storage.fields.find((f) => f.target === target && f.name === property)?.schemaName ?? property;
  const classRules = (target: Class): [string, RuleName][] =>
    [...(propertyRules.get(target) ?? [])].map(([property, rule]) => [schemaNameOf(target, property), rule]);
  const inputs = new Map(storage.inputTypes.map((t) => [t.name, new Map(classRules(t.target))] as const));
  const args = new Map<string, Map<string, RuleName>>();
  const handlers = [...storage.queries, ...storage.mutations, ...storage.subscriptions, ...storage.fieldResolvers];
  for (const handler of handlers) {
    const own = new Map<string, RuleName>();
    for (const param of storage.params.filter((p) => p.target === handler.target && p.methodName === handler.methodName)) {
      if (param.kind === 'arg') {
        const rule = parameterRules.get(param.target)?.get(param.methodName)?.get(param.index);
        if (rule) own.set(param.name, rule);
      } else if (param.kind === 'args') for (const [name, rule] of classRules(param.getType() as Class)) own.set(name, rule);
    }
    if (own.size) args.set(handler.schemaName, new Map([...(args.get(handler.schemaName) ?? []), ...own]));
  }
  return { args, inputs };
}

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  isInputObjectType,
  isNonNullType,
  Kind,
  parse,
  validate,
  visit,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLInputObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';

/** A named GraphQL document from schema/operations, parsed and validated once at start. */
export interface LoadedOperation {
  name: string;
  document: DocumentNode;
  operation: OperationDefinitionNode;
  /** The one root field the operation selects (its result is the response body). */
  rootField: string;
}

const OPERATIONS_DIR = new URL('../schema/operations/', import.meta.url).pathname;

/**
 * Loads every `*.graphql` operation document (fragments come from `fragments/` and are appended
 * where spread) and validates it against the schema: a bad document fails the start.
 */
export function loadOperations(schema: GraphQLSchema, dir = OPERATIONS_DIR): Map<string, LoadedOperation> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  const fragmentDir = join(dir, 'fragments');
  for (const file of safeList(fragmentDir)) {
    for (const def of parse(readFileSync(join(fragmentDir, file), 'utf8')).definitions) {
      if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    }
  }
  const out = new Map<string, LoadedOperation>();
  for (const file of safeList(dir)) {
    const name = file.replace(/\.graphql$/, '');
    const parsed = parse(readFileSync(join(dir, file), 'utf8'));
    const document: DocumentNode = { ...parsed, definitions: [...parsed.definitions, ...usedFragments(parsed, fragments)] };
    const errors = validate(schema, document);
    if (errors.length) throw new Error(`schema/operations/${file} is invalid: ${errors.map((e) => e.message).join('; ')}`);
    const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    if (!operation || operation.name?.value !== name) throw new Error(`schema/operations/${file} must hold one operation named ${name}`);
    const root = operation.selectionSet.selections;
    if (root.length !== 1 || root[0].kind !== Kind.FIELD) throw new Error(`schema/operations/${file} must select exactly one root field`);
    out.set(name, { name, document, operation, rootField: root[0].alias?.value ?? root[0].name.value });
  }
  return out;
}

/** The input object type of one variable, to check a REST body schema against it. */
export function variableInputType(schema: GraphQLSchema, op: LoadedOperation, variable: string): GraphQLInputObjectType | null {
  const def = op.operation.variableDefinitions?.find((v) => v.variable.name.value === variable);
  if (!def) return null;
  let typeNode = def.type;
  while (typeNode.kind !== Kind.NAMED_TYPE) typeNode = typeNode.type;
  const type = schema.getType(typeNode.name.value);
  return type && isInputObjectType(type) ? type : null;
}

/** Names of the operation's variables, with whether each is required (non-null without default). */
export function operationVariables(op: LoadedOperation): Map<string, boolean> {
  const vars = new Map<string, boolean>();
  for (const v of op.operation.variableDefinitions ?? [])
    vars.set(v.variable.name.value, v.type.kind === Kind.NON_NULL_TYPE && !v.defaultValue);
  return vars;
}

/** Non-null fields of an input type (the ones a body must carry). */
export function requiredInputFields(type: GraphQLInputObjectType): string[] {
  return Object.values(type.getFields())
    .filter((f) => isNonNullType(f.type) && f.defaultValue === undefined)
    .map((f) => f.name);
}

function usedFragments(document: DocumentNode, fragments: Map<string, FragmentDefinitionNode>): FragmentDefinitionNode[] {
  const used = new Map<string, FragmentDefinitionNode>();
  const collect = (node: DocumentNode | FragmentDefinitionNode) =>
    visit(node, {
      FragmentSpread(spread) {
        const name = spread.name.value;
        const fragment = fragments.get(name);
        if (!fragment) throw new Error(`unknown fragment ${name}`);
        if (!used.has(name)) {
          used.set(name, fragment);
          collect(fragment);
        }
      },
    });
  collect(document);
  return [...used.values()];
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith('.graphql'))
      .sort();
  } catch {
    return [];
  }
}

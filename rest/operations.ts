import {
  isInputObjectType,
  isNonNullType,
  Kind,
  parse,
  validate,
  type DocumentNode,
  type GraphQLInputObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import type { OperationDocument } from '../schema/operations/types.js';

/** A row's operation document, parsed and validated once at start. */
export interface LoadedOperation {
  name: string;
  document: DocumentNode;
  operation: OperationDefinitionNode;
  /** The one root field the operation selects (its result is the response body). */
  rootField: string;
}

/**
 * Parses a generated document (the operation with the fragments it spreads) and validates it against
 * the schema: a bad document fails the start.
 */
export function loadOperation(schema: GraphQLSchema, source: OperationDocument<unknown>): LoadedOperation {
  const { name } = source;
  const where = `schema/operations/${name}.graphql`;
  const document = parse(source.source);
  const errors = validate(schema, document);
  if (errors.length) throw new Error(`${where} is invalid: ${errors.map((e) => e.message).join('; ')}`);
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (operations.length !== 1 || operations[0].name?.value !== name) throw new Error(`${where} must hold one operation named ${name}`);
  const [operation] = operations;
  const root = operation.selectionSet.selections;
  if (root.length !== 1 || root[0].kind !== Kind.FIELD) throw new Error(`${where} must select exactly one root field`);
  return { name, document, operation, rootField: root[0].alias?.value ?? root[0].name.value };
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

import {
  getNamedType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  OperationTypeNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLOutputType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';

export type JsonSchema = Record<string, unknown>;

const SCALARS: Record<string, JsonSchema> = {
  String: { type: 'string' },
  ID: { type: 'string' },
  Int: { type: 'integer' },
  Float: { type: 'number' },
  Boolean: { type: 'boolean' },
  DateTime: { type: 'string', format: 'date-time' },
  JSON: {},
};

/**
 * The JSON Schema of what an operation's root field returns, derived from its selection set,
 * so the documented response can never drift from what is executed.
 */
export function responseSchema(schema: GraphQLSchema, document: DocumentNode): JsonSchema {
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
  if (!operation || operation.kind !== Kind.OPERATION_DEFINITION) throw new Error('document has no operation');
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const root = operation.operation === OperationTypeNode.MUTATION ? schema.getMutationType() : schema.getQueryType();
  const field = operation.selectionSet.selections[0];
  if (!root || field.kind !== Kind.FIELD) throw new Error('operation must select one root field');
  const def = root.getFields()[field.name.value];
  return typeSchema(def.type, field.selectionSet, fragments);
}

function typeSchema(
  type: GraphQLOutputType,
  selection: SelectionSetNode | undefined,
  fragments: Map<string, FragmentDefinitionNode>,
): JsonSchema {
  if (isNonNullType(type)) return typeSchema(type.ofType, selection, fragments);
  if (isListType(type)) return { type: 'array', items: nonNull(typeSchema(type.ofType, selection, fragments), type.ofType) };
  if (isScalarType(type)) return { ...(SCALARS[type.name] ?? {}) };
  if (isEnumType(type)) return { type: 'string', enum: type.getValues().map((v) => v.name) };
  if (isObjectType(type) && selection) {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    const fields = type.getFields();
    for (const node of flatten(selection, fragments)) {
      const key = node.alias?.value ?? node.name.value;
      const fieldDef = fields[node.name.value];
      if (!fieldDef) continue;
      const inner = nonNull(typeSchema(fieldDef.type, node.selectionSet, fragments), fieldDef.type);
      if (fieldDef.description) inner.description = fieldDef.description;
      properties[key] = inner;
      if (isNonNullType(fieldDef.type)) required.push(key);
    }
    return { type: 'object', properties, required, additionalProperties: false };
  }
  throw new Error(`cannot describe GraphQL type ${getNamedType(type).name}`);
}

/** A nullable GraphQL type also admits null. */
function nonNull(schema: JsonSchema, type: GraphQLOutputType): JsonSchema {
  if (isNonNullType(type)) return schema;
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}

function flatten(selection: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>) {
  const out: import('graphql').FieldNode[] = [];
  for (const s of selection.selections) {
    if (s.kind === Kind.FIELD) out.push(s);
    else if (s.kind === Kind.INLINE_FRAGMENT) out.push(...flatten(s.selectionSet, fragments));
    else {
      const fragment = fragments.get(s.name.value);
      if (!fragment) throw new Error(`unknown fragment ${s.name.value}`);
      out.push(...flatten(fragment.selectionSet, fragments));
    }
  }
  return out;
}

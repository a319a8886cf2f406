import {
  buildClientSchema,
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLField,
  type GraphQLOutputType,
  type GraphQLInputType,
  type GraphQLSchema,
  type IntrospectionQuery,
} from 'graphql';
import type { TestApp } from './app.js';

// The standard introspection query nests `ofType` deeper than the service's depth limit allows;
// four levels describe every type the schema uses ([String!]! is three).
const TYPE_REF = 'kind name ofType { kind name ofType { kind name ofType { kind name } } }';
const INPUT_VALUE = `name description defaultValue type { ${TYPE_REF} }`;
const QUERY = `{ __schema {
  queryType { name } mutationType { name } subscriptionType { name }
  types { kind name description
    fields(includeDeprecated: true) { name description args { ${INPUT_VALUE} } type { ${TYPE_REF} } isDeprecated deprecationReason }
    inputFields { ${INPUT_VALUE} }
    interfaces { ${TYPE_REF} }
    enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
    possibleTypes { ${TYPE_REF} }
  }
  directives { name description locations args { ${INPUT_VALUE} } }
} }`;

/** The service's schema as a client sees it through introspection (with the given bearer). */
export async function introspect(app: TestApp, bearer: string | null = null): Promise<GraphQLSchema> {
  const res = await app.gql<IntrospectionQuery>(QUERY, {}, bearer);
  if (res.errors?.length) throw new Error(`introspection failed: ${JSON.stringify(res.errors)}`);
  return buildClientSchema(res.data);
}

/** A value that reaches a resolver for an input of this type: `named` by argument or field name first, else a neutral one by type. */
export function sampleValue(name: string, type: GraphQLInputType, named: Record<string, unknown> = {}): unknown {
  if (name in named) return named[name];
  const inner = getNullableType(type);
  if (isListType(inner)) return [];
  const base = getNamedType(type);
  if (isEnumType(base)) return base.getValues()[0].value;
  if (isInputObjectType(base)) {
    return Object.fromEntries(
      Object.values(base.getFields())
        .filter((f) => isNonNullType(f.type))
        .map((f) => [f.name, sampleValue(f.name, f.type, named)]),
    );
  }
  const byType: Record<string, unknown> = {
    Int: 1,
    Float: 1,
    Boolean: false,
    DateTime: '2100-01-01T00:00:00Z',
    JSON: {},
    ID: '00000000-0000-4000-8000-000000000000',
  };
  return byType[base.name] ?? 'x';
}

/** `query($a: T, …) { r: field(a: $a, …) <selection> }` for a root field, and the kind of operation it is. */
export function operationFor(schema: GraphQLSchema, field: GraphQLField<unknown, unknown>, selection = '{ __typename }'): string {
  const kind = schema.getQueryType()?.getFields()[field.name] === field ? 'query' : 'mutation';
  const signature = field.args.map((a) => `$${a.name}: ${a.type}`).join(', ');
  const args = field.args.map((a) => `${a.name}: $${a.name}`).join(', ');
  const returnsObject = !isLeafType(getNamedType(field.type));
  return `${kind}${signature ? `(${signature})` : ''} { r: ${field.name}${args ? `(${args})` : ''} ${returnsObject ? selection : ''} }`;
}

/** Every root field (queries, then mutations), without those that take a file upload. */
export function rootFields(schema: GraphQLSchema): GraphQLField<unknown, unknown>[] {
  return [...Object.values(schema.getQueryType()?.getFields() ?? {}), ...Object.values(schema.getMutationType()?.getFields() ?? {})].filter(
    (f) => !f.args.some((a) => getNamedType(a.type).name === 'Upload'),
  );
}

/** Every scalar field of a type, and nested object fields without required arguments, to a depth of three. */
export function deepSelection(type: GraphQLOutputType, depth = 0): string {
  const named = getNamedType(type);
  if (!isObjectType(named) || depth > 3) return '{ __typename }';
  const parts = Object.values(named.getFields())
    .filter((f) => f.args.every((a) => !isNonNullType(a.type) || a.defaultValue !== undefined))
    .map((f) => (isLeafType(getNamedType(f.type)) ? f.name : depth < 3 ? `${f.name} ${deepSelection(f.type, depth + 1)}` : ''))
    .filter(Boolean);
  return `{ __typename ${parts.join(' ')} }`;
}

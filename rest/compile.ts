import { Kind, OperationTypeNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { accessOf, type Access } from '../src/auth/access.js';
import type { Permission } from '../src/auth/permissions.js';
import { responseSchema, type JsonSchema } from './jsonSchema.js';
import { loadOperation, operationVariables, requiredInputFields, variableInputType, type LoadedOperation } from './operations.js';
import { COMMON_ERRORS, variableOf, WORKSPACE_PARAM, type ParamDef, type Route } from './routeDefinition.js';
import { compileBody, compileParams, type Check } from './validate.js';

/** A route joined with its pre-validated document, validators and derived response schema. */
export interface CompiledRoute {
  route: Route;
  op: LoadedOperation;
  pathParams: Record<string, ParamDef>;
  checkPath: Check;
  checkQuery: Check;
  checkBody: Check | null;
  checkHeaders: Check;
  /** Schema of the success body (the root field's result, or its `items` for lists). */
  responseSchema: JsonSchema;
  /** The document compiled to a function (graphql-jit) over the same schema: runs it with a context and variables. */
  run(contextValue: unknown, variables: Record<string, unknown>): ExecutionResult | Promise<ExecutionResult>;
  errors: number[];
  /** The permissions its root field's resolver declares (`@Needs`): checked before the body is read, listed by MCP and OpenAPI. */
  permissions: readonly Permission[];
  /** The permissions in words, as the OpenAPI document and /llms.txt say them (with the rule of a policy that decides them per call). */
  permissionsText: string;
}

/** `a`, `b`; or, when the operation itself needs none, what a key needs anyway and the rules of its policies. */
function permissionsText(permissions: readonly Permission[], policyRules: string[]): string {
  if (permissions.length) return permissions.map((p) => `\`${p}\``).join(', ');
  return policyRules.length ? policyRules.join(' ') : 'none beyond a key of the workspace';
}

/**
 * Compiles the route table against the schema at start. Every mismatch between a row and its
 * document fails the start instead of a request: those `tsc` cannot see (body field the input type
 * lacks, required input field the body does not require, required variable nothing supplies) and,
 * for a row that got past the types, those it can (a parameter naming no variable). Each document is also
 * compiled by graphql-jit into a function that executes it on the same schema and resolvers
 * (REST's GET note measured +15% req/s over graphql-js `execute`, which re-walks the document on
 * every request).
 */
export function compileRoutes(schema: GraphQLSchema, routes: Route[]): CompiledRoute[] {
  const operations = new Map<Route['operation'], LoadedOperation>();
  const seen = new Set<string>();
  return routes.map((route) => {
    const where = `route ${route.name} (${route.method} ${route.path})`;
    if (seen.has(route.name)) throw new Error(`${where}: duplicate name`);
    seen.add(route.name);
    const op = operations.get(route.operation) ?? loadOperation(schema, route.operation);
    operations.set(route.operation, op);
    const pathParams = { ...(route.path.includes('{workspace}') ? { workspace: WORKSPACE_PARAM } : {}), ...route.pathParams };
    const placeholders = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    if (placeholders.sort().join() !== Object.keys(pathParams).sort().join())
      throw new Error(`${where}: path placeholders and pathParams differ`);
    checkVariables(schema, route, op, pathParams, where);
    const access = rootAccess(schema, op);
    if (!access) throw new Error(`${where}: its root field's resolver declares no permissions (@Needs)`);
    if (access.form !== 'workspace')
      throw new Error(`${where}: an endpoint's root field must be a workspace operation (@Needs(permissions))`);
    const rootSchema = responseSchema(schema, op.document);
    const compiledQuery = compileQuery(schema, op.document, op.name);
    if (!isCompiledQuery(compiledQuery))
      throw new Error(`${where}: the document does not compile: ${compiledQuery.errors?.map((e) => e.message).join('; ')}`);
    const body = route.list ? (rootSchema.properties as Record<string, JsonSchema> | undefined)?.items : rootSchema;
    if (!body) throw new Error(`${where}: a list route's root field must select items`);
    return {
      route,
      op,
      pathParams,
      checkPath: compileParams(pathParams, 'path'),
      checkQuery: compileParams(route.query, 'query'),
      checkBody: route.body ? compileBody(route.body.schema) : null,
      checkHeaders: compileParams(route.headers, 'header'),
      responseSchema: body,
      run: (contextValue, variables) => compiledQuery.query(undefined, contextValue, variables),
      // Mutations also answer 409 for a reused or in-flight Idempotency-Key.
      errors: [...new Set([...COMMON_ERRORS, ...(route.method === 'GET' ? [] : [409]), ...(route.extraErrors ?? [])])].sort(),
      permissions: access.permissions,
      permissionsText: permissionsText(
        access.permissions,
        access.policies.filter((d) => d.fromArgs).map((d) => d.policy.rule),
      ),
    };
  });
}

/** The access the operation's root field declares on its resolver. */
function rootAccess(schema: GraphQLSchema, op: LoadedOperation): Access | undefined {
  const root = op.operation.operation === OperationTypeNode.MUTATION ? schema.getMutationType() : schema.getQueryType();
  const selection = op.operation.selectionSet.selections[0];
  const field = selection.kind === Kind.FIELD ? root?.getFields()[selection.name.value] : undefined;
  return field && accessOf(field);
}

function checkVariables(schema: GraphQLSchema, route: Route, op: LoadedOperation, pathParams: Record<string, ParamDef>, where: string) {
  const vars = operationVariables(op);
  const supplied = new Set<string>();
  if (route.body && route.upload) throw new Error(`${where}: a route has a JSON body or an upload, not both`);
  if (route.upload) {
    const def = op.operation.variableDefinitions?.find((v) => v.variable.name.value === route.upload!.variable);
    if (!def || !/Upload/.test(JSON.stringify(def.type)))
      throw new Error(`${where}: upload variable $${route.upload.variable} must be of type Upload`);
    supplied.add(route.upload.variable);
  }
  for (const [name, def] of [...Object.entries(pathParams), ...Object.entries(route.query ?? {}), ...Object.entries(route.headers ?? {})]) {
    const variable = variableOf(name, def);
    if (!vars.has(variable)) throw new Error(`${where}: parameter ${name} has no variable $${variable}`);
    supplied.add(variable);
  }
  if (route.body) {
    const input = variableInputType(schema, op, route.body.variable);
    if (!input) throw new Error(`${where}: body variable $${route.body.variable} is not an input object`);
    supplied.add(route.body.variable);
    const fields = input.getFields();
    const rename = route.body.rename ?? {};
    for (const prop of Object.keys(route.body.schema.properties)) {
      const field = rename[prop] ?? prop;
      if (!fields[field]) throw new Error(`${where}: body field ${prop} is not a field of ${input.name}`);
    }
    const requiredBody = new Set(((route.body.schema.required as string[] | undefined) ?? []).map((p) => rename[p] ?? p));
    for (const field of requiredInputFields(input)) {
      if (!requiredBody.has(field)) throw new Error(`${where}: ${input.name}.${field} is required but the body does not require it`);
    }
  }
  for (const [variable, required] of vars) {
    if (required && !supplied.has(variable)) throw new Error(`${where}: required variable $${variable} is never supplied`);
  }
}

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
import { checkRule } from './check.js';
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

/** The arguments of root fields that carry their own rule. */
const FIELD_ARGUMENTS: Record<string, Record<string, RuleName>> = {
  auditEvents: { workspaceId: 'id', limit: 'auditLimit' },
  organizations: { after: 'cursor' },
  workspaces: { organizationId: 'id', after: 'cursor' },
  members: { organizationId: 'id', role: 'role', after: 'cursor' },
  agentKeys: { organizationId: 'id', memberId: 'id', workspaceId: 'id', after: 'cursor' },
  // A note event's target is its path (up to 512 bytes).
  auditTrail: { workspaceId: 'id', actor: 'role', action: 'name', targetType: 'name', targetId: 'notePath', after: 'cursor' },
  usage: { workspaceId: 'id' },
  changelogEntries: { limit: 'pageLimit' },
  memoryNote: { path: 'notePath', ifNoneMatch: 'ifNoneMatch' },
  memoryNoteHistory: { path: 'notePath', limit: 'pageLimit' },
  memoryNoteRevision: { path: 'notePath', version: 'version' },
  putMemoryNote: { ifMatch: 'ifMatch', ifNoneMatch: 'ifNoneMatch' },
  memoryNotes: { prefix: 'notePrefix', tag: 'tag', kind: 'noteKindFilter', limit: 'pageLimit' },
  searchMemory: { q: 'query', limit: 'searchLimit' },
  myProposals: { limit: 'pageLimit' },
  proposals: { limit: 'pageLimit' },
  search: { q: 'query', limit: 'searchLimit' },
  contentGapReports: { workspaceId: 'id' },
  contentGapGroups: { workspaceId: 'id' },
  searchAnalytics: { workspaceId: 'id', days: 'analyticsDays' },
  webhooks: { organizationId: 'id' },
  webhookDeliveries: { webhookId: 'id', limit: 'deliveryLimit' },
  updateArticle: { ifMatch: 'ifMatch' },
  articleRevisions: { limit: 'pageLimit' },
  articleRevision: { version: 'version' },
  articleDiff: { from: 'version', to: 'version' },
  restoreArticle: { version: 'version', ifMatch: 'ifMatch' },
  articleTree: { ifNoneMatch: 'ifNoneMatch' },
  deleteMemoryNote: { path: 'notePath', ifMatch: 'ifMatch' },
  rejectProposal: { reason: 'reason' },
  contentGaps: { limit: 'pageLimit' },
  proposeFromContentGap: { group: 'entryId' },
  auditEventAdded: { workspaceId: 'id', action: 'name' },
};

/** The fields of input types. */
const INPUT_FIELDS: Record<string, Record<string, RuleName>> = {
  CreateOrganizationInput: { name: 'name', plan: 'plan' },
  UpdateOrganizationInput: { plan: 'plan' },
  CreateWorkspaceInput: { organizationId: 'id', name: 'name' },
  CreateMemberInput: { organizationId: 'id', email: 'email', role: 'role' },
  CreateAgentKeyInput: { memberId: 'id', name: 'name', permissions: 'permissions', workspaceId: 'id' },
  UpdateMemberInput: { role: 'role' },
  UpdateAgentKeyInput: { name: 'name' },
  AttachSpecInput: { url: 'url', spec: 'spec' },
  PlaceApiPageInput: { section: 'sectionKey', position: 'position' },
  CreateApiSectionInput: { label: 'label', key: 'newSlug', tag: 'apiTag', position: 'position' },
  CreateSectionInput: { label: 'label', key: 'newSlug', position: 'position' },
  CreateArticleInput: { title: 'title', section: 'sectionKey', markdown: 'markdown' },
  UpdateArticleInput: { title: 'title', markdown: 'markdown' },
  PlaceArticleInput: { section: 'sectionKey', position: 'position' },
  CreateChangelogEntryInput: { title: 'title', markdown: 'markdown', tags: 'changelogTags' },
  UpdateChangelogEntryInput: { title: 'title', markdown: 'markdown', tags: 'changelogTags' },
  PutMemoryNoteInput: { path: 'notePath', body: 'noteBody', kind: 'noteKind', links: 'noteLinks', tags: 'noteTags' },
  CreateProposalInput: { article: 'articleRef', section: 'sectionKey', title: 'title', markdown: 'markdown', summary: 'summary' },
  ContentGapInput: { question: 'question', slug: 'reportSlug' },
  GapProposalInput: { title: 'title', section: 'sectionKey', markdown: 'markdown', summary: 'summary' },
  CreateWebhookInput: { organizationId: 'id', workspaceId: 'id', url: 'url', events: 'events' },
  UpdateWebhookInput: { url: 'url', events: 'events' },
};

/** Scalars that carry client-sized text (enums, Boolean, Int, Float and DateTime are bounded by their coercion). */
const SIZED_SCALARS = new Set(['String', 'ID', 'JSON']);

/** The rule bound to each argument and input field of the built schema. */
const bound = new WeakMap<GraphQLArgument | GraphQLInputField, Rule>();

/**
 * Binds the input contract to a built schema: every argument and input field that carries a
 * string, an ID, JSON or a list gets its rule (a missing one fails the start), its description
 * states the rule, and every field with arguments checks them before its resolver runs, so
 * GraphQL, and REST and MCP which execute the same schema, refuse the same input alike.
 */
export function applyInputContract(schema: GraphQLSchema): void {
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) bind(field, INPUT_FIELDS[type.name]?.[field.name], `${type.name}.${field.name}`);
    } else if (isObjectType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (!field.args.length) continue;
        for (const arg of field.args) bind(arg, argumentRule(field.name, arg), `${type.name}.${field.name}(${arg.name}:)`);
        guard(field);
      }
    }
  }
  for (const [name, fields] of Object.entries(INPUT_FIELDS)) {
    const type = schema.getType(name);
    if (!type || !isInputObjectType(type)) throw new Error(`input contract: no input type ${name}`);
    for (const field of Object.keys(fields)) if (!type.getFields()[field]) throw new Error(`input contract: ${name} has no field ${field}`);
  }
}

function argumentRule(fieldName: string, arg: GraphQLArgument): RuleName | undefined {
  const own = FIELD_ARGUMENTS[fieldName]?.[arg.name];
  if (own) return own;
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

/** Makes the field check its arguments (and their input objects' fields) before its resolver (a subscription: before it subscribes). */
function guard(field: GraphQLField<unknown, unknown>): void {
  const args = field.args;
  const checked =
    (run: GraphQLFieldResolver<unknown, unknown>): GraphQLFieldResolver<unknown, unknown> =>
    (source, values, context, info) => {
      const issues: FieldIssue[] = [];
      for (const arg of args) checkInput(arg, (values as Record<string, unknown>)[arg.name], arg.name, issues, true);
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

import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { DateTimeResolver } from 'graphql-scalars';
import { buildSchema } from 'type-graphql';
import { AdminResolver } from './resolvers/AdminResolver.js';
import { ApiReferenceResolver } from './resolvers/ApiReferenceResolver.js';
import { ArticleResolver } from './resolvers/ArticleResolver.js';
import { ChangelogResolver } from './resolvers/ChangelogResolver.js';
import { MemoryResolver } from './resolvers/MemoryResolver.js';
import { ProposalResolver } from './resolvers/ProposalResolver.js';
import { SearchResolver } from './resolvers/SearchResolver.js';
import { UploadResolver } from './resolvers/UploadResolver.js';
import { WebhookResolver } from './resolvers/WebhookResolver.js';

/** Every resolver of the schema. */
export const RESOLVERS = [AdminResolver, ChangelogResolver, MemoryResolver, ArticleResolver, ProposalResolver, UploadResolver, SearchResolver, ApiReferenceResolver, WebhookResolver] as const;

/** Builds the executable schema (once per process). */
export async function buildAppSchema(): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers: RESOLVERS,
    scalarsMap: [{ type: Date, scalar: DateTimeResolver }],
    validate: { forbidUnknownValues: false },
    emitSchemaFile: false,
  });
}

import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { DateTimeResolver } from 'graphql-scalars';
import { validateOrReject } from 'class-validator';
import { ArgumentValidationError, buildSchema } from 'type-graphql';
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

/**
 * Validates an input object's class-validator rules the way type-graphql's default does (missing
 * properties skipped, unknown values allowed), but with class-validator imported once: the default
 * imports it dynamically for every argument, which under the TypeScript loader hooks costs a
 * round trip to the loader thread per request.
 */
async function validateArgument(value: unknown): Promise<void> {
  if (value === null || typeof value !== 'object') return;
  const options = { skipMissingProperties: true, forbidUnknownValues: false };
  try {
    if (Array.isArray(value)) await Promise.all(value.filter((v) => v !== null && typeof v === 'object').map((v) => validateOrReject(v, options)));
    else await validateOrReject(value, options);
  } catch (error) {
    throw new ArgumentValidationError(error as ConstructorParameters<typeof ArgumentValidationError>[0]);
  }
}

/** Builds the executable schema (once per process). */
export async function buildAppSchema(): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers: RESOLVERS,
    scalarsMap: [{ type: Date, scalar: DateTimeResolver }],
    validateFn: validateArgument,
    emitSchemaFile: false,
  });
}

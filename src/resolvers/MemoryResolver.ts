import { Arg, Args, ArgsType, Ctx, Field, ID, InputType, Int, Mutation, Query, Resolver, FieldResolver, Root } from 'type-graphql';
import { InputRule } from '../contract/declared.js';
import { Caller, CallerOf, Needs, type Scope } from '../auth/access.js';
import type { RequestContext } from '../context.js';
import {
  DeletedMemoryNote,
  MemoryIndexEntry,
  MemoryIndexPage,
  MemoryNoteHistoryPage,
  MemoryNoteRevision,
  MemorySearchPage,
} from '../types/memory.js';
import { MemoryNote } from '../entities/MemoryNote.js';
import * as memory from '../services/memoryNotes.js';
import * as memorySearch from '../services/memorySearch.js';
import * as history from '../services/noteHistory.js';
import { SearchModeValue, type SearchMode } from '../types/search.js';
import { permitOf, POLICIES } from '../auth/policies.js';

@InputType({ description: 'A note to create (new path) or update (existing path).' })
class PutMemoryNoteInput {
  @InputRule('notePath') @Field() path!: string;
  @InputRule('noteBody') @Field({ description: 'Markdown.' }) body!: string;
  @InputRule('noteKind') @Field() kind!: string;
  @InputRule('noteLinks') @Field(() => [String]) links!: string[];
  @InputRule('noteTags') @Field(() => [String]) tags!: string[];
}

@ArgsType()
class MemoryIndexArgs {
  @Field() workspace!: string;
  @InputRule('notePrefix')
  @Field(() => String, { nullable: true, description: 'Directory-like prefix: "ops" matches "ops" and "ops/…".' })
  prefix?: string | null;
  @InputRule('tag') @Field(() => String, { nullable: true }) tag?: string | null;
  @InputRule('noteKindFilter') @Field(() => String, { nullable: true }) kind?: string | null;
  @InputRule('pageLimit') @Field(() => Int, { nullable: true }) limit?: number | null;
  @Field(() => String, { nullable: true }) cursor?: string | null;
}

@ArgsType()
class MemoryHistoryArgs {
  @Field() workspace!: string;
  @InputRule('notePath') @Field() path!: string;
  @InputRule('pageLimit') @Field(() => Int, { nullable: true }) limit?: number | null;
  @Field(() => String, { nullable: true }) cursor?: string | null;
}

const IF_MATCH = 'The ETag the write is based on ("v<version>", several comma-separated, or *): 412 when the note is at another version.';

@ArgsType()
class MemorySearchArgs {
  @Field() workspace!: string;
  @InputRule('query') @Field({ description: 'Web-search syntax: words, "quoted phrases", -excluded, or.' }) q!: string;
  @Field(() => SearchModeValue, {
    nullable: true,
    description: 'fulltext (default: BM25F), semantic (by embedding similarity), or hybrid: both rankings fused by reciprocal rank.',
  })
  mode?: SearchMode | null;
  @InputRule('searchLimit') @Field(() => Int, { nullable: true }) limit?: number | null;
  @Field(() => String, { nullable: true }) cursor?: string | null;
  @Field(() => Boolean, {
    nullable: true,
    description: 'Give each hit its `explain`: full-text score per field and term, semantic rank, fused rank.',
  })
  explain?: boolean | null;
}

/** What the note field resolvers read of a note (entity or plain object). */
interface NoteRoot {
  path: string;
  workspace: { id: string };
}

/** Memory endpoints 5–9 and backlinks for dashboards; rules live in services/memoryNotes.ts. */
@Resolver(() => MemoryNote)
export class MemoryResolver {
  @Needs(['memory.read'])
  @Query(() => MemoryNote, { description: 'A note by path; accessedAt advances.' })
  memoryNote(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @InputRule('notePath') @Arg('path') path: string,
    @InputRule('ifNoneMatch')
    @Arg('ifNoneMatch', () => String, { nullable: true, description: 'An ETag you hold: the not_modified error while it is current.' })
    ifNoneMatch?: string | null,
  ) {
    return memory.getNote(ctx, scope, path, ifNoneMatch);
  }

  @Needs(['memory.read'])
  @Query(() => MemoryNoteHistoryPage, { description: "A note's replaced states, newest first (bodies by memoryNoteRevision)." })
  memoryNoteHistory(
    @Ctx() ctx: RequestContext,
    @CallerOf('workspace') scope: Scope,
    @Args(() => MemoryHistoryArgs) args: MemoryHistoryArgs,
  ) {
    return history.noteHistory(ctx, scope, args.path, args);
  }

  @Needs(['memory.read'])
  @Query(() => MemoryNoteRevision, { description: 'One replaced state of a note, with its body.' })
  memoryNoteRevision(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @InputRule('notePath') @Arg('path') path: string,
    @InputRule('version') @Arg('version', () => Int) version: number,
  ) {
    return history.noteRevision(ctx, scope, path, version);
  }

  @Needs(['memory.read'])
  @Query(() => MemoryIndexPage, { description: 'The index of notes (no bodies), sorted by path.' })
  memoryNotes(@Ctx() ctx: RequestContext, @CallerOf('workspace') scope: Scope, @Args(() => MemoryIndexArgs) args: MemoryIndexArgs) {
    return memory.listNotes(ctx, scope, args);
  }

  @Needs(['memory.read'])
  @Query(() => MemorySearchPage, { description: 'Search over path, tags and body: full text, by embedding similarity, or both fused.' })
  searchMemory(@Ctx() ctx: RequestContext, @CallerOf('workspace') scope: Scope, @Args(() => MemorySearchArgs) args: MemorySearchArgs) {
    return memorySearch.searchNotes(ctx, scope, args);
  }

  @Needs(['memory.write'], { policies: [POLICIES.similarNotes] })
  @Mutation(() => MemoryNote, { description: 'Creates the note at a new path, or updates the note at an existing path.' })
  putMemoryNote(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @Arg('input', () => PutMemoryNoteInput) input: PutMemoryNoteInput,
    @InputRule('ifMatch')
    @Arg('ifMatch', () => String, { nullable: true, description: `${IF_MATCH} Never creates.` })
    ifMatch?: string | null,
    @InputRule('ifNoneMatch')
    @Arg('ifNoneMatch', () => String, {
      nullable: true,
      description: '`*`: create only (412 when a note has the path); ETags: 412 when the note is at one of them.',
    })
    ifNoneMatch?: string | null,
  ) {
    return memory.putNote(ctx, scope, input, { ifMatch, ifNoneMatch }, permitOf(POLICIES.similarNotes, scope));
  }

  @Needs(['memory.write'])
  @Mutation(() => DeletedMemoryNote)
  deleteMemoryNote(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @InputRule('notePath') @Arg('path') path: string,
    @InputRule('ifMatch') @Arg('ifMatch', () => String, { nullable: true, description: IF_MATCH }) ifMatch?: string | null,
  ) {
    return memory.deleteNote(ctx, scope, path, ifMatch);
  }

  // Roots are typed structurally (not as the entity class): type-graphql then passes the plain
  // note objects the service returns as they are, instead of copying each into a new entity.
  @FieldResolver(() => ID)
  workspaceId(@Root() note: NoteRoot): string {
    return note.workspace.id;
  }

  @Needs(['memory.read'])
  @FieldResolver(() => [MemoryIndexEntry], { description: "Notes whose links contain this note's path." })
  backlinks(@Root() note: NoteRoot, @Ctx() ctx: RequestContext, @CallerOf((d) => (d.root as NoteRoot).workspace.id) scope: Scope) {
    return memory.backlinks(ctx, scope, note.path);
  }
}

/* eslint-disable @typescript-eslint/no-unused-vars -- the arguments are declared here and read by each `subscribe` */
import { Arg, Field, ID, Int, ObjectType, Resolver, Root, Subscription } from 'type-graphql';
import { InputRule } from '../contract/declared.js';
import { checkAccess, checkWorkspaceAccess, Needs, type WorkspaceAccess } from '../auth/access.js';
import type { RequestContext } from '../context.js';
import { AuditEvent } from '../entities/AuditEvent.js';
import { ContentGapGroup } from '../entities/ContentGap.js';
import { Proposal } from '../entities/Proposal.js';
import * as live from '../services/live.js';

@ObjectType({ description: 'A proposal was created, approved, rejected or returned: the event type and the proposal as it is now.' })
class ProposalChange {
  @Field({ description: 'proposal.created | proposal.approved | proposal.rejected | proposal.returned' }) action!: string;
  @Field(() => Proposal) proposal!: Proposal;
}

@ObjectType({ description: 'A content gap was reported or resolved, or a proposal drafted from a group changed.' })
class ContentGapChange {
  @Field({
    description:
      'content_gap.reported | content_gap.resolved | proposal.created | proposal.approved | proposal.rejected | proposal.returned',
  })
  action!: string;
  @Field(() => Int, { nullable: true, description: 'The report, for content_gap.reported.' }) reportId!: number | null;
  @Field(() => ContentGapGroup, {
    nullable: true,
    description: 'The group as it is now; null while a new report waits to be grouped (grouping runs in the background).',
  })
  group!: ContentGapGroup | null;
}

type Args<T> = { args: T; context: RequestContext };

/** Who may subscribe: each stream checks its caller by the declaration when it opens and again before every event. */
const AUDIT = Needs.personIn('audit.read', 'workspaceId');
const REVIEW = Needs(['proposal.read', 'article.update'], { adminMayAct: true });
const DRAFT = Needs(['article.create'], { adminMayAct: true });
const admitted = (access: WorkspaceAccess, args: { workspace: string }) => (c: RequestContext) => checkWorkspaceAccess(c, access, args);

/**
 * Live updates over WebSocket (graphql-ws, at /graphql): committed changes of one workspace,
 * authorised like the matching queries, from every process sharing the database.
 */
@Resolver()
export class LiveResolver {
  @AUDIT
  @Subscription(() => AuditEvent, {
    description: 'Audit events of a workspace as they are committed, optionally of one action (admin token).',
    subscribe: ({ args, context }: Args<{ workspaceId: string; action?: string | null }>) =>
      live.auditEventStream(context, args.workspaceId, args.action ?? null, (c) => checkAccess(c, AUDIT.access, args)),
  })
  auditEventAdded(
    @Root() event: AuditEvent,
    @InputRule('id') @Arg('workspaceId', () => ID) _workspaceId: string,
    @InputRule('name')
    @Arg('action', () => String, { nullable: true, description: 'Only events of this type, e.g. proposal.created.' })
    _action?: string | null,
  ): AuditEvent {
    return event;
  }

  @REVIEW
  @Subscription(() => ProposalChange, {
    description:
      "A workspace's proposals as they are created, approved and rejected (like `proposals`: article.update, or the admin token).",
    subscribe: ({ args, context }: Args<{ workspace: string }>) =>
      live.proposalStream(context, admitted(REVIEW.access as WorkspaceAccess, args)),
  })
  proposalChanged(@Root() change: live.ProposalChangeValue, @Arg('workspace') _workspace: string): ProposalChange {
    return change;
  }

  @DRAFT
  @Subscription(() => ContentGapChange, {
    description:
      "A workspace's content gaps as they are reported, drafted and resolved (like `contentGaps`: article.create, or the admin token).",
    subscribe: ({ args, context }: Args<{ workspace: string }>) =>
      live.contentGapStream(context, admitted(DRAFT.access as WorkspaceAccess, args)),
  })
  contentGapChanged(@Root() change: live.ContentGapChangeValue, @Arg('workspace') _workspace: string): ContentGapChange {
    return change;
  }
}

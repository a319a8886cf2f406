import { AgentKey } from './AgentKey.js';
import { ApiSpec } from './ApiSpec.js';
import { Article } from './Article.js';
import { AuditEvent } from './AuditEvent.js';
import { ChangelogEntry } from './ChangelogEntry.js';
import { ContentGapGroup, ContentGapReport } from './ContentGap.js';
import { Embedding, EmbeddingStamp } from './Embedding.js';
import { EmbeddingJob } from './EmbeddingJob.js';
import { Member } from './Member.js';
import { MemoryNote } from './MemoryNote.js';
import { MemoryUsage } from './MemoryUsage.js';
import { Organization } from './Organization.js';
import { Proposal } from './Proposal.js';
import { RateLimitCounter } from './RateLimitCounter.js';
import { SearchLog } from './SearchLog.js';
import { Section } from './Section.js';
import { Setting } from './Setting.js';
import { Upload } from './Upload.js';
import { IdempotencyRecord } from './IdempotencyRecord.js';
import { Webhook, WebhookAttempt, WebhookDelivery } from './Webhook.js';
import { Workspace } from './Workspace.js';

/** Every entity, for the ORM's discovery. */
export const ENTITIES = [
  Organization,
  Workspace,
  Member,
  AgentKey,
  ChangelogEntry,
  AuditEvent,
  Setting,
  RateLimitCounter,
  MemoryNote,
  MemoryUsage,
  Section,
  Article,
  Proposal,
  Upload,
  Embedding,
  EmbeddingStamp,
  EmbeddingJob,
  SearchLog,
  ContentGapReport,
  ContentGapGroup,
  ApiSpec,
  Webhook,
  WebhookDelivery,
  WebhookAttempt,
  IdempotencyRecord,
];

export {
  AgentKey,
  ApiSpec,
  Article,
  AuditEvent,
  ChangelogEntry,
  ContentGapGroup,
  ContentGapReport,
  Embedding,
  EmbeddingJob,
  EmbeddingStamp,
  Member,
  MemoryNote,
  MemoryUsage,
  Organization,
  Proposal,
  RateLimitCounter,
  SearchLog,
  Section,
  Setting,
  Upload,
  Webhook,
  WebhookAttempt,
  WebhookDelivery,
  IdempotencyRecord,
  Workspace,
};

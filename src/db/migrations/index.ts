import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122005315_initial } from './Migration20261122005315_initial.js';
import { Migration20261122005554_rate_limits } from './Migration20261122005554_rate_limits.js';
import { Migration20261122010528_memory } from './Migration20261122010528_memory.js';
import { Migration20261122011131_articles } from './Migration20261122011131_articles.js';
import { Migration20261122012030_search } from './Migration20261122012030_search.js';
import { Migration20261122012917_openapi } from './Migration20261122012917_openapi.js';
import { Migration20261122014225_webhooks } from './Migration20261122014225_webhooks.js';
import { Migration20261122040507_embedding_stamps } from './Migration20261122040507_embedding_stamps.js';
import { Migration20261122042000_inline_search_vectors } from './Migration20261122042000_inline_search_vectors.js';
import { Migration20261123030000_rate_limit_leases } from './Migration20261123030000_rate_limit_leases.js';
import { Migration20261123040000_title_search } from './Migration20261123040000_title_search.js';
import { Migration20261124010000_events } from './Migration20261124010000_events.js';
import { Migration20261124020000_content_revision } from './Migration20261124020000_content_revision.js';
import { Migration20261124030000_note_versions } from './Migration20261124030000_note_versions.js';
import { Migration20261124040000_article_revisions } from './Migration20261124040000_article_revisions.js';
import { Migration20261124050000_event_payloads } from './Migration20261124050000_event_payloads.js';
import { Migration20261124060000_note_near_keys } from './Migration20261124060000_note_near_keys.js';
import { Migration20261124070000_gap_proposals } from './Migration20261124070000_gap_proposals.js';
import { Migration20261125010000_note_embeddings } from './Migration20261125010000_note_embeddings.js';
import { Migration20261126010000_live_review } from './Migration20261126010000_live_review.js';
import { Migration20261127010000_socket_leases } from './Migration20261127010000_socket_leases.js';

/** Every committed migration, in order (listed explicitly so no file globbing happens at run time). */
export const MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261122005315_initial', class: Migration20261122005315_initial },
  { name: 'Migration20261122005554_rate_limits', class: Migration20261122005554_rate_limits },
  { name: 'Migration20261122010528_memory', class: Migration20261122010528_memory },
  { name: 'Migration20261122011131_articles', class: Migration20261122011131_articles },
  { name: 'Migration20261122012030_search', class: Migration20261122012030_search },
  { name: 'Migration20261122012917_openapi', class: Migration20261122012917_openapi },
  { name: 'Migration20261122014225_webhooks', class: Migration20261122014225_webhooks },
  { name: 'Migration20261122040507_embedding_stamps', class: Migration20261122040507_embedding_stamps },
  { name: 'Migration20261122042000_inline_search_vectors', class: Migration20261122042000_inline_search_vectors },
  { name: 'Migration20261123030000_rate_limit_leases', class: Migration20261123030000_rate_limit_leases },
  { name: 'Migration20261123040000_title_search', class: Migration20261123040000_title_search },
  { name: 'Migration20261124010000_events', class: Migration20261124010000_events },
  { name: 'Migration20261124020000_content_revision', class: Migration20261124020000_content_revision },
  { name: 'Migration20261124030000_note_versions', class: Migration20261124030000_note_versions },
  { name: 'Migration20261124040000_article_revisions', class: Migration20261124040000_article_revisions },
  { name: 'Migration20261124050000_event_payloads', class: Migration20261124050000_event_payloads },
  { name: 'Migration20261124060000_note_near_keys', class: Migration20261124060000_note_near_keys },
  { name: 'Migration20261124070000_gap_proposals', class: Migration20261124070000_gap_proposals },
  { name: 'Migration20261125010000_note_embeddings', class: Migration20261125010000_note_embeddings },
  { name: 'Migration20261126010000_live_review', class: Migration20261126010000_live_review },
  { name: 'Migration20261127010000_socket_leases', class: Migration20261127010000_socket_leases },
];

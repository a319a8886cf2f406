import { Entity, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Workspace } from './Workspace.js';

/** The OpenAPI description attached to a workspace (at most one), and how its last sync went. */
@Entity({ tableName: 'api_specs' })
@Unique({ name: 'api_specs_workspace_unique', properties: ['workspace'] })
export class ApiSpec {
  @PrimaryKey({ autoincrement: true })
  id!: number;

  @ManyToOne(() => Workspace, { fieldName: 'workspace_id', deleteRule: 'cascade' })
  workspace!: Workspace;

  /** url | raw */
  @Property({ type: 'text' })
  source!: string;

  @Property({ type: 'text', nullable: true })
  url: string | null = null;

  /** The spec text as attached or last fetched. */
  @Property({ type: 'text', lazy: true })
  raw!: string;

  @Property({ type: 'text', nullable: true })
  title: string | null = null;

  @Property({ type: 'text', nullable: true })
  version: string | null = null;

  @Property({ type: 'text', nullable: true })
  openapiVersion: string | null = null;

  @Property({ type: 'integer' })
  operationCount: number = 0;

  @Property({ type: 'json', nullable: true })
  lastSync: Record<string, unknown> | null = null;

  @Property({ columnType: 'timestamptz', type: 'datetime', nullable: true })
  lastSyncAt: Date | null = null;

  /** ok | failed */
  @Property({ type: 'text', nullable: true })
  lastSyncResult: string | null = null;

  @Property({ type: 'text', nullable: true })
  lastSyncError: string | null = null;

  @Property({ type: 'json' })
  warnings: string[] = [];

  @Property({ columnType: 'timestamptz', type: 'datetime' })
  createdAt: Date = new Date();
}

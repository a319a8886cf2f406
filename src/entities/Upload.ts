import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { Workspace } from './Workspace.js';

/** An uploaded image; its bytes live in the database (upload_parts) so every process can serve them. */
@Entity({ tableName: 'uploads' })
@Index({ name: 'uploads_workspace_sha_idx', properties: ['workspace', 'sha256'] })
export class Upload {
  /** 128 random bits, base64url: the unguessable part of the public URL. */
  @PrimaryKey({ type: 'text' })
  id!: string;

  @ManyToOne(() => Workspace, { fieldName: 'workspace_id', deleteRule: 'cascade' })
  workspace!: Workspace;

  @Property({ type: 'text' })
  contentType!: string;

  @Property({ type: 'text' })
  extension!: string;

  @Property({ type: 'integer' })
  size!: number;

  @Property({ type: 'integer' })
  width!: number;

  @Property({ type: 'integer' })
  height!: number;

  @Property({ type: 'text' })
  sha256!: string;

  @Property({ columnType: 'timestamptz', type: 'datetime' })
  createdAt: Date = new Date();
}

import { Entity, PrimaryKey, Property } from '@mikro-orm/core';

/** Server-wide settings shared by every process (server secret, admin token digest). */
@Entity({ tableName: 'settings' })
export class Setting {
  @PrimaryKey({ type: 'text' })
  key!: string;

  @Property({ type: 'text' })
  value!: string;
}

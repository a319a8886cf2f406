import { Migration } from '@mikro-orm/migrations';

/**
 * Every open WebSocket of an agent key holds a lease row, so the caps on sockets per key and per
 * organization hold across every process sharing the database (renewed while the socket is open,
 * expiring when a process dies without freeing its rows).
 */
export class Migration20261127010000_socket_leases extends Migration {
  override up(): void {
    this.addSql(
      'create table "socket_leases" ("id" uuid primary key, "key_id" uuid not null, "organization_id" uuid not null, "created_at" timestamptz not null default now(), "expires_at" timestamptz not null);',
    );
    this.addSql('create index "socket_leases_organization_idx" on "socket_leases" ("organization_id", "expires_at");');
  }

  override down(): void {
    this.addSql('drop table "socket_leases";');
  }
}

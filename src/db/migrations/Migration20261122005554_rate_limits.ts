import { Migration } from '@mikro-orm/migrations';

export class Migration20261122005554_rate_limits extends Migration {

  override up(): void {
    this.addSql(`create table "rate_limit_counters" ("key" text not null, "window_start" timestamptz not null, "count" int not null default 0, constraint "rate_limit_counters_pkey" primary key ("key", "window_start"));`);
  }

  override down(): void {
    this.addSql(`drop table if exists "rate_limit_counters" cascade;`);
  }

}

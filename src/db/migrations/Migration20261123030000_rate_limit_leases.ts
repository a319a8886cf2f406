import { Migration } from '@mikro-orm/migrations';

/** Rate-limit windows record each grant's size, so a process can take several requests at once (a lease). */
export class Migration20261123030000_rate_limit_leases extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "rate_limit_counters" add column "granted" int not null default 0;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "rate_limit_counters" drop column "granted";`);
  }
}

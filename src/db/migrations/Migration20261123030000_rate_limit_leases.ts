import { Migration } from '@mikro-orm/migrations';

/**
 * Rate-limit windows record each grant's size, so a process can take several requests at once (a
 * lease), and their own end, so a process deletes only windows that have ended, whatever window
 * length it is configured with (rows from before get an end one hour after their start: no
 * window of theirs was longer than the default cleanup kept).
 */
export class Migration20261123030000_rate_limit_leases extends Migration {
  override up(): void {
    this.addSql(`alter table "rate_limit_counters" add column "granted" int not null default 0, add column "window_end" timestamptz null;`);
    this.addSql(`update "rate_limit_counters" set "window_end" = "window_start" + interval '1 hour';`);
    this.addSql(`alter table "rate_limit_counters" alter column "window_end" set not null;`);
  }

  override down(): void {
    this.addSql(`alter table "rate_limit_counters" drop column "granted", drop column "window_end";`);
  }
}

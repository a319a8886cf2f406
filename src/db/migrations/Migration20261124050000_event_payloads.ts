import { Migration } from '@mikro-orm/migrations';

/**
 * Helpers for events whose payload the database builds in the writing statement (memory notes):
 * `wks_iso` writes a time as REST does (ISO 8601, UTC, milliseconds), and `wks_event_payload`
 * makes a webhook payload `{object, previous}` that stays within 64 KiB: when it would not, its
 * text values are cut (to the same length, halved until it fits) and `truncated: true` is added.
 */
export class Migration20261124050000_event_payloads extends Migration {
  override up(): void {
    this.addSql(`create or replace function wks_iso(t timestamptz) returns text language sql immutable as $$
      select to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;`);
    this.addSql(`create or replace function wks_event_payload(object jsonb, previous jsonb) returns jsonb language plpgsql immutable as $$
      declare
        payload jsonb := jsonb_strip_nulls(jsonb_build_object('object', object, 'previous', previous));
        cut int := 16384;
      begin
        while octet_length(payload::text) > 65536 and cut >= 64 loop
          payload := jsonb_build_object('object', wks_cut_strings(object, cut), 'truncated', true);
          if previous is not null then payload := payload || jsonb_build_object('previous', wks_cut_strings(previous, cut)); end if;
          cut := cut / 2;
        end loop;
        return payload;
      end $$;`);
    this.addSql(`create or replace function wks_cut_strings(o jsonb, len int) returns jsonb language sql immutable as $$
      select coalesce(jsonb_object_agg(key, case when jsonb_typeof(value) = 'string' then to_jsonb(left(value #>> '{}', len)) else value end), '{}'::jsonb)
        from jsonb_each(o) $$;`);
  }

  override down(): void {
    this.addSql('drop function if exists wks_event_payload(jsonb, jsonb);');
    this.addSql('drop function if exists wks_cut_strings(jsonb, int);');
    this.addSql('drop function if exists wks_iso(timestamptz);');
  }
}

import { Migration } from '@mikro-orm/migrations';

/**
 * Article history: a row per version of every article, the state it had at that version (title,
 * Markdown, status, visibility, section, position) and who made it, how and why. Written by a
 * trigger whenever an article is inserted or its version changes, so every path that writes an
 * article (edits, moves, approved proposals, restores, spec syncs) records its revision in the
 * same transaction and versions have no gaps. The service says who acts and why through the
 * transaction-local setting `wks.article_change` (JSON: action, keyId, memberId, proposalId,
 * restoredFrom, summary); without it the revision says `created` / `updated` and no actor.
 * `restricted` keeps whether the content was restricted (by the article or its section) when written.
 * Articles that exist when history begins get one `baseline` revision at their current version.
 */
export class Migration20261124040000_article_revisions extends Migration {
  override up(): void {
    this.addSql(`create table "article_revisions" (
      "workspace_id" uuid not null references "workspaces" ("id") on delete cascade,
      "article_id" int not null references "articles" ("id") on delete cascade,
      "version" int not null,
      "title" text not null,
      "markdown" text not null,
      "status" text not null,
      "visibility" text not null,
      "section_id" int not null,
      "position" int not null,
      "restricted" boolean not null,
      "action" text not null,
      "changed" text[] not null,
      "summary" text null,
      "agent_key_id" uuid null,
      "member_id" uuid null,
      "proposal_id" int null,
      "restored_from" int null,
      "created_at" timestamptz not null,
      primary key ("workspace_id", "article_id", "version"));`);
    this.addSql(`create or replace function wks_record_article_revision() returns trigger language plpgsql as $$
      declare
        change jsonb := nullif(current_setting('wks.article_change', true), '')::jsonb;
        prev record;
        changed text[] := '{}';
      begin
        if tg_op = 'UPDATE' then
          -- Compared with the previous version as recorded (a move renumbers before it raises the version).
          select title, markdown, status, visibility, section_id, position into prev
            from article_revisions where workspace_id = new.workspace_id and article_id = new.id and version < new.version
           order by version desc limit 1;
          if not found then
            select old.title, old.markdown, old.status, old.visibility, old.section_id, old.position into prev;
          end if;
          changed := array_remove(array[
            case when new.title is distinct from prev.title then 'title' end,
            case when new.markdown is distinct from prev.markdown then 'markdown' end,
            case when new.status is distinct from prev.status then 'status' end,
            case when new.visibility is distinct from prev.visibility then 'visibility' end,
            case when new.section_id is distinct from prev.section_id then 'section' end,
            case when new.position is distinct from prev.position then 'position' end,
            case when new.api_state is distinct from old.api_state then 'apiState' end], null);
        end if;
        insert into article_revisions (workspace_id, article_id, version, title, markdown, status, visibility, section_id, position,
                                       restricted, action, changed, summary, agent_key_id, member_id, proposal_id, restored_from, created_at)
        values (new.workspace_id, new.id, new.version, new.title, new.markdown, new.status, new.visibility, new.section_id, new.position,
                new.visibility = 'restricted' or exists (select 1 from sections s where s.id = new.section_id and s.visibility = 'restricted'),
                coalesce(change->>'action', case when tg_op = 'INSERT' then 'created' else 'updated' end), changed, change->>'summary',
                (change->>'keyId')::uuid, (change->>'memberId')::uuid, (change->>'proposalId')::int, (change->>'restoredFrom')::int,
                coalesce(new.updated_at, now()))
        on conflict (workspace_id, article_id, version) do nothing;
        return null;
      end $$;`);
    this.addSql(`create trigger "articles_revision_insert" after insert on "articles"
      for each row execute function wks_record_article_revision();`);
    this.addSql(`create trigger "articles_revision_update" after update on "articles"
      for each row when (new.version is distinct from old.version) execute function wks_record_article_revision();`);
    this.addSql(`insert into article_revisions (workspace_id, article_id, version, title, markdown, status, visibility, section_id, position,
                                                 restricted, action, changed, created_at)
      select a.workspace_id, a.id, a.version, a.title, a.markdown, a.status, a.visibility, a.section_id, a.position,
             a.visibility = 'restricted' or s.visibility = 'restricted', 'baseline', '{}', a.updated_at
        from articles a join sections s on s.id = a.section_id;`);
  }

  override down(): void {
    this.addSql('drop trigger "articles_revision_update" on "articles";');
    this.addSql('drop trigger "articles_revision_insert" on "articles";');
    this.addSql('drop function wks_record_article_revision();');
    this.addSql('drop table if exists "article_revisions";');
  }
}

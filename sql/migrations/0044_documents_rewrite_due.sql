-- 0044_documents_rewrite_due: data.documents.rewrite_due, set for every live document
-- whose current version has a near-copy pointer. Migration 0043 recomputed the stored
-- SimHashes with new features (docs/adr/0003, amendment), but the pointers the old
-- features made stay where they were: a section whose only likeness to another was its
-- markup (a reST underline, a table rule) is still stored as a pointer of that other
-- section, with its own text in no index. The database keeps each document's text but
-- not its chunks' vectors, so a migration cannot re-home them; the next write of such a
-- document (contexts ingest, POST /documents, contexts sync) makes a new version even
-- when its content is unchanged, which re-chunks it under the new features.
alter table data.documents add column rewrite_due boolean not null default false;

comment on column data.documents.rewrite_due
    is 'Set by a migration that changed how chunks are matched: the next write of this document makes a new version even when its content is unchanged (and a git sync reads its file again).';

update data.documents d set rewrite_due = true
where d.deleted_at is null
  and exists (select 1
              from data.fragment_sources s
              join data.fragments f on f.org_id = s.org_id and f.fragment_id = s.fragment_id
              where s.org_id = d.org_id and s.doc_id = d.doc_id and s.doc_version = d.current_version
                and s.retired_at is null and s.content_hash <> f.content_hash);

-- Its rows gain rewrite_due (sql/functions/36_git_sync.sql makes it again; a new
-- database has no functions yet).
drop function if exists api.sync_documents(text, text, text[]);

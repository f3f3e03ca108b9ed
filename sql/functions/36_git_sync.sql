-- Git-aware incremental sync (`contexts sync PATH`, docs/sync.md): the last commit a
-- repo's documents were synced to (data.git_syncs), and the documents a sync manages
-- (those whose current version it wrote: their metadata names the commit, git_commit).
-- The CLI reads the state, asks git what changed since that commit, ingests and deletes
-- through the usual write path (service.begin_document, service.delete_document), then records
-- the new commit here.

-- api.sync_state: the last sync of a repo, or no row when it was never synced. Security
-- invoker: row-level security on data.git_syncs applies; an unknown org or repo is
-- P0002, a repo outside the caller's grants 42501.
create or replace function api.sync_state(p_org_id text, p_repo_id text)
returns table (org_id text, repo_id text, commit_sha text, ref text, synced_at timestamptz, synced_by text,
               written int, deleted int, full_scan boolean)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    perform data._require_read(p_org_id, p_repo_id, null, null);
    perform data._require_org(p_org_id);
    perform data._require_scope(p_org_id, p_repo_id, null);
    return query
    select s.org_id, s.repo_id, s.commit_sha, s.ref, s.synced_at, s.synced_by, s.written, s.deleted, s.full_scan
    from data.git_syncs s
    where s.org_id = p_org_id and s.repo_id = p_repo_id;
end
$$;
comment on function api.sync_state(text, text)
    is 'The last git sync of a repo the caller may read: commit, branch, when, by whom, what it wrote and deleted; no row when never synced.';

-- api.sync_documents: the live documents of a repo (repo scope only: no persona or
-- session label) whose current version a sync wrote, with that version's commit;
-- restricted to p_paths when given, with the git blob the version was read from (a
-- file whose blob is the stored one is not read again). What a sync may delete: a file
-- that git no longer tracks, or that moved, takes its document with it; a document
-- ingested otherwise (`contexts ingest`, HTTP) into the same repo is never deleted by a
-- sync, until a sync writes its path (the same text too: the version then records the
-- commit, ADR 0007's amendment of 2026-12-07).
drop function if exists api.sync_documents(text, text, text[]);
create or replace function api.sync_documents(p_org_id text, p_repo_id text, p_paths text[] default null)
returns table (doc_id bigint, path text, version int, commit_sha text, rewrite_due boolean, blob text)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    perform data._require_read(p_org_id, p_repo_id, null, null);
    perform data._require_org(p_org_id);
    perform data._require_scope(p_org_id, p_repo_id, null);
    return query
    select d.doc_id, d.path, d.current_version, v.metadata ->> 'git_commit', d.rewrite_due, v.metadata ->> 'git_blob'
    from data.documents d
    join data.document_versions v on v.org_id = d.org_id and v.doc_id = d.doc_id and v.version = d.current_version
    where d.org_id = p_org_id and d.repo_id = p_repo_id and d.persona_id is null and d.session_id is null
      and d.deleted_at is null
      and v.metadata ? 'git_commit'
      and (p_paths is null or d.path = any(p_paths))
    order by d.path;
end
$$;
comment on function api.sync_documents(text, text, text[])
    is 'Live documents of a repo whose current version a git sync wrote (metadata git_commit), with that commit, the file''s git blob (null when written before syncs recorded it) and whether a migration marked it for re-chunking (rewrite_due: a sync reads its file again); optionally only these paths.';

-- service.sync_record: record that a repo's documents now hold the tracked files of
-- p_commit_sha. Needs a write grant on the repo (42501). p_previous is the commit the
-- sync started from (null for a first sync): when another sync recorded a different one
-- meanwhile, the record is refused (40001) and the caller syncs again from there.
create or replace function service.sync_record(
    p_org_id text, p_repo_id text, p_commit_sha text, p_ref text, p_previous text,
    p_written int default 0, p_deleted int default 0, p_full_scan boolean default false)
returns table (org_id text, repo_id text, commit_sha text, ref text, synced_at timestamptz, synced_by text,
               written int, deleted int, full_scan boolean)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    broken_constraint text;
    me record;
    stored text;
    saved data.git_syncs;
begin
    select * into me from data._principal_or_raise();
    if p_repo_id is null then
        raise exception 'a sync needs a repo' using errcode = '22023';
    end if;
    perform data._require_write(p_org_id, p_repo_id, null, null);
    perform service.ensure_scope(p_org_id, p_repo_id);
    perform pg_advisory_xact_lock(hashtextextended('contexts.sync:' || p_org_id || '/' || p_repo_id, 0));
    select s.commit_sha into stored from data.git_syncs s
    where s.org_id = p_org_id and s.repo_id = p_repo_id for update;
    if stored is distinct from p_previous then
        raise exception 'repo % was synced to % meanwhile (this sync started from %)',
            p_repo_id, coalesce(stored, 'nothing'), coalesce(p_previous, 'nothing')
            using errcode = '40001', hint = 'Run the sync again.';
    end if;
    insert into data.git_syncs as s (org_id, repo_id, commit_sha, ref, synced_by, written, deleted, full_scan)
    values (p_org_id, p_repo_id, p_commit_sha, p_ref, me.principal_id, p_written, p_deleted, p_full_scan)
    on conflict on constraint git_syncs_pkey do update
        set commit_sha = excluded.commit_sha, ref = excluded.ref, synced_at = clock_timestamp(),
            synced_by = excluded.synced_by, written = excluded.written, deleted = excluded.deleted,
            full_scan = excluded.full_scan
    returning * into saved;
    return query select saved.org_id, saved.repo_id, saved.commit_sha, saved.ref, saved.synced_at, saved.synced_by,
                        saved.written, saved.deleted, saved.full_scan;
exception when check_violation then
    get stacked diagnostics broken_constraint = constraint_name;
    perform data._raise_invalid('invalid sync record', sqlerrm, broken_constraint);
end
$$;
comment on function service.sync_record(text, text, text, text, text, int, int, boolean)
    is 'Record the commit a repo''s documents were synced to (write grant on the repo); refused (40001) when another sync recorded a different commit since p_previous.';

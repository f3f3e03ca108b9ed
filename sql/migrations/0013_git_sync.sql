-- 0013_git_sync: git-aware incremental sync (`contexts sync PATH`, docs/sync.md).
--
--   * data.git_syncs: per org and repo, the last commit whose tracked files the repo's
--     documents hold, when and by whom it was synced, and what that sync changed. A sync
--     compares HEAD with this commit and ingests only what git says changed. Under forced
--     row-level security: readable by the principals who may read the repo; written only
--     through api.sync_record (sql/functions/36_git_sync.sql), which needs a write grant
--     on the repo.
--   * Each document version a sync writes carries its commit in its metadata
--     (data.document_versions.metadata ->> 'git_commit'); no column changes.

create table data.git_syncs (
    org_id      text not null references data.orgs on delete cascade,
    repo_id     text not null,
    commit_sha  text not null check (commit_sha ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'),
    ref         text check (length(ref) <= 1024),
    synced_at   timestamptz not null default clock_timestamp(),
    synced_by   text not null,
    written     int not null default 0 check (written >= 0),
    deleted     int not null default 0 check (deleted >= 0),
    full_scan   boolean not null default false,
    primary key (org_id, repo_id),
    foreign key (org_id, repo_id) references data.repos on delete cascade
);
comment on table data.git_syncs is 'Last synced commit of each repo (contexts sync): its tracked files at that commit are what the repo''s synced documents hold (api.sync_record, api.sync_state).';
comment on column data.git_syncs.commit_sha is 'Full object name of the commit last synced (SHA-1 or SHA-256).';
comment on column data.git_syncs.ref is 'Branch (or other symbolic ref) HEAD pointed at when synced; null on a detached HEAD.';
comment on column data.git_syncs.synced_by is 'Principal that synced it (it held a write grant on the repo).';
comment on column data.git_syncs.written is 'Files that sync ingested (added, modified, renamed; unchanged content writes no version).';
comment on column data.git_syncs.deleted is 'Documents that sync deleted (files deleted or renamed away).';
comment on column data.git_syncs.full_scan is 'True when that sync compared every tracked file with what is stored (first sync, or the previous commit was gone from the repository).';
alter table data.git_syncs enable row level security;
alter table data.git_syncs force row level security;

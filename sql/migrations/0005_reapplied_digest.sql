-- What migrate() last re-applied (sql/functions, views, policies, grants), as one
-- digest. A migrate that finds the files unchanged re-applies nothing and takes no
-- lock on tenant tables, so CLI commands, eval runs and a starting service no longer
-- deadlock on re-created policies while others read; `contexts migrate` always
-- re-applies. Not tenant data: it lives beside alembic_version, granted to no one.
create table public.contexts_reapplied (
    singleton boolean primary key default true check (singleton),
    digest text not null,
    applied_at timestamptz not null default now()
);
comment on table public.contexts_reapplied is
    'Digest of the SQL files migrate() last re-applied (functions, views, policies, grants).';

-- 0045_due_tasks: public.contexts_due, work a migration leaves for `migrate` to do once
-- the functions are current (they are re-applied after every migration, so a migration
-- cannot call the new version of a function). The first task: recompute every validity
-- window that a supersession made, under the rule of ADR 0016's amendment of 2026-12-06
-- (a supersession counts only when any writer of the newer document may write the older
-- one): windows stored under the earlier rule may hide a document from its own readers.
create table public.contexts_due (
    task text primary key,
    due_since timestamptz not null default now()
);

comment on table public.contexts_due
    is 'Tasks a migration left for migrate() to run once the re-applied functions are current (app/db/migrate.py: DUE_TASKS); a task is deleted when done.';

insert into public.contexts_due (task) values ('refresh_validity');

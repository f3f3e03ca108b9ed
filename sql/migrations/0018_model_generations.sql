-- 0018_model_generations: embedding model upgrades with a shadow window (R-ING-3).
--
--   * data.embedding_models gains how to load a generation (source), its window and
--     its life: a generation is active (serves queries), shadow (being re-embedded, or
--     built and waiting to be promoted) or retired (kept until its window ends, so that
--     promoting it back is cheap; dropped_at once its vectors and index are gone).
--     At most one shadow per namespace, as there is at most one active.
--   * data.model_replays: per recorded retrieval replayed on a shadow generation, the
--     top-3 overlap with what the active generation returns. No query text: the trace
--     id leads to it, through api.retrieval_traces, which redacts it per reader.
--
-- Existing generations stay active with no source (their name is how they load).

alter table data.embedding_models
    add column source text,
    add column window_ends_at timestamptz,
    add column promoted_at timestamptz,
    add column retired_at timestamptz,
    add column dropped_at timestamptz,
    add constraint embedding_models_dropped_retired check (dropped_at is null or status = 'retired');
comment on column data.embedding_models.source is 'What loads the model (a name or a local path) when it differs from name; null: name.';
comment on column data.embedding_models.status is 'active: serves queries; shadow: being built or in its window; retired: replaced (kept until window_ends_at unless dropped).';
comment on column data.embedding_models.window_ends_at is 'End of the shadow window (`contexts models upgrade --window-days`); a retired generation is kept until then.';
comment on column data.embedding_models.promoted_at is 'When the generation last became active by promotion (null: registered active).';
comment on column data.embedding_models.retired_at is 'When another generation replaced it.';
comment on column data.embedding_models.dropped_at is 'When its vectors and HNSW index were dropped (the row stays: traces name it).';
create unique index embedding_models_one_shadow on data.embedding_models (namespace) where status = 'shadow';

create table data.model_replays (
    replay_id    bigint generated always as identity primary key,
    model_id     int not null references data.embedding_models,
    org_id       text not null references data.orgs on delete cascade,
    principal_id text,
    trace_id     uuid not null,
    overlap      float8 check (overlap between 0 and 1),
    shared_top   int check (shared_top >= 0),
    top          int not null check (top >= 1),
    same_order   boolean,
    error        text,
    replayed_at  timestamptz not null default now()
);
create index model_replays_model on data.model_replays (model_id, org_id, replayed_at);
comment on table data.model_replays is 'A recorded retrieval replayed on a shadow generation: top-n token overlap and shared fragments against the active generation. Org-wide readers of the org only.';
comment on column data.model_replays.overlap is 'Jaccard index of the word tokens of the two top-n texts (as `contexts eval replay`); null on error.';
comment on column data.model_replays.shared_top is 'Fragments present in both top-n lists.';
comment on column data.model_replays.trace_id is 'The retrieval replayed (data.retrieval_traces; its query is read there, redacted per reader).';
alter table data.model_replays enable row level security;
alter table data.model_replays force row level security;

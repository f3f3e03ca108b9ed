-- Embedding model generations: upgrades, the shadow window, promotion, drops
-- (docs/adr/0021-model-upgrades-and-shadow-window.md).
--
-- A namespace has one active generation (serves queries and ingestion), at most one
-- shadow (being re-embedded, then waiting for promotion), and retired ones whose vectors
-- stay until their window ends, so promoting one back is cheap. Ingestion writes a
-- vector for every generation that still has vectors (service.secondary_models), so neither
-- the shadow nor a recently retired generation falls behind.

-- data._serving_models: the generation each namespace is searched with: the active one,
-- unless the transaction names another generation of that namespace in the setting
-- contexts.serve_generations ({"prose": 2}), as `contexts models replay`, the promotion
-- gate and a retrieval asking for the previous generation do. A generation it names must
-- still be queryable: the active one, the shadow, or a retired one within its window
-- (55000 otherwise: dropped, or its window has ended; P0002 for none such). The setting
-- only chooses whose vectors rank the candidates: row-level security applies to every
-- generation's vectors alike, so it gives no reader anything it could not read.
create or replace function data._serving_models()
returns table (model_id int, namespace text, name text, dims int, generation int)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    requested jsonb;
    asked record;
    m data.embedding_models;
begin
    begin
        requested := nullif(current_setting('contexts.serve_generations', true), '')::jsonb;
    exception when invalid_text_representation then
        raise exception 'contexts.serve_generations must be a JSON object {"namespace": generation}'
            using errcode = '22023';
    end;
    if requested is not null and jsonb_typeof(requested) <> 'object' then
        raise exception 'contexts.serve_generations must be a JSON object {"namespace": generation}'
            using errcode = '22023';
    end if;
    for asked in select * from jsonb_each(coalesce(requested, '{}')) loop
        m := null;
        if jsonb_typeof(asked.value) = 'number' and asked.value::text ~ '^[0-9]{1,9}$' then
            select * into m from data.embedding_models em
            where em.namespace = asked.key and em.generation = asked.value::text::int;
        end if;
        if m.model_id is null then
            raise exception 'namespace % has no generation %', asked.key, asked.value using errcode = 'P0002';
        end if;
        if m.dropped_at is not null then
            raise exception 'generation % of % (%) was dropped on % and answers nothing', m.generation, m.namespace,
                m.name, m.dropped_at using errcode = '55000',
                hint = 'A retired generation is queryable until its shadow window ends (docs/models.md).';
        end if;
        if m.status = 'retired' and m.window_ends_at <= now() then
            raise exception 'generation % of % (%) ended its shadow window on % and answers nothing', m.generation,
                m.namespace, m.name, m.window_ends_at using errcode = '55000',
                hint = 'It is dropped by `contexts models drop-retired` (the service does it daily).';
        end if;
    end loop;
    return query
    select em.model_id, em.namespace, em.name, em.dims, em.generation
    from data.embedding_models em
    where case when requested ? em.namespace
               then em.generation::text = requested ->> em.namespace
               else em.status = 'active' end;
end
$$;
comment on function data._serving_models() is 'Per namespace, the generation queries search: the active one, or the queryable one contexts.serve_generations names (55000 for a dropped one or one past its window).';

-- service.previous_models: per namespace, the generation its last promotion (or rollback)
-- replaced, while its vectors are kept: what a retrieval asking for the previous
-- generation searches, with what loads its model. `queryable` is false once its window
-- has ended (it answers nothing then, until `drop-retired` removes it). A namespace
-- never upgraded, or whose replaced generations were all dropped, has no row.
create or replace function service.previous_models()
returns table (model_id int, namespace text, name text, source text, dims int, generation int,
               window_ends_at timestamptz, queryable boolean)
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
    select distinct on (em.namespace)
           em.model_id, em.namespace, em.name, coalesce(em.source, em.name), em.dims, em.generation,
           em.window_ends_at, em.window_ends_at > now()
    from data.embedding_models em
    where em.status = 'retired' and em.dropped_at is null
    order by em.namespace, em.retired_at desc nulls last, em.generation desc
$$;
comment on function service.previous_models() is 'Per namespace, the generation the last promotion replaced (not dropped), what loads it, and whether its window still lets it answer.';

-- service.secondary_models: the generations besides the active one that new fragments get
-- vectors for (the shadow, and retired ones not yet dropped), with what loads each.
create or replace function service.secondary_models()
returns table (model_id int, namespace text, name text, source text, dims int, generation int, status text)
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
    select em.model_id, em.namespace, em.name, coalesce(em.source, em.name), em.dims, em.generation, em.status
    from data.embedding_models em
    where em.status <> 'active' and em.dropped_at is null
    order by em.namespace, em.generation
$$;
comment on function service.secondary_models() is 'Shadow and not yet dropped retired generations: ingestion writes their vectors too.';

-- service.serving_models: what a service embeds with: per namespace the active generation,
-- its label and what loads it (a local path). Services compare it with their own models
-- at start and on a cheap periodic check, and load the promoted model when it changed.
create or replace function service.serving_models()
returns table (model_id int, namespace text, name text, source text, dims int, generation int)
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
    select em.model_id, em.namespace, em.name, coalesce(em.source, em.name), em.dims, em.generation
    from data.embedding_models em
    where em.status = 'active'
    order by em.namespace
$$;
comment on function service.serving_models() is 'Per namespace, the active generation and what loads its model: what a service follows.';

-- api.model_generations: every generation with its coverage (vectors over the active
-- fragments of its namespace) and the mean top-3 overlap of its replays, counted over
-- what the caller may read (row-level security): an org-wide principal sees its org,
-- the migrator everything. A principal without an org grant is refused.
create or replace function api.model_generations()
returns table (
    model_id int, namespace text, name text, source text, dims int, generation int, status text,
    created_at timestamptz, window_ends_at timestamptz, promoted_at timestamptz, retired_at timestamptz,
    dropped_at timestamptz, fragments bigint, vectors bigint, replays bigint, mean_overlap float8,
    min_overlap float8)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    if data.acl_principal() is not null and not data.acl_org_wide() then
        raise exception 'model generations are for principals with an org grant' using errcode = '42501';
    end if;
    return query
    with counted as (
        select f.namespace, count(*) as fragments from data.fragments f where f.active group by f.namespace
    ), covered as (
        select e.model_id, count(*) as vectors
        from data.embeddings e join data.fragments f on f.fragment_id = e.fragment_id and f.org_id = e.org_id
        where f.active group by e.model_id
    ), replayed as (
        select r.model_id, count(*) as replays, avg(r.overlap) as mean_overlap, min(r.overlap) as min_overlap
        from data.model_replays r group by r.model_id
    )
    select em.model_id, em.namespace, em.name, coalesce(em.source, em.name), em.dims, em.generation, em.status,
           em.created_at, em.window_ends_at, em.promoted_at, em.retired_at, em.dropped_at,
           coalesce(c.fragments, 0), case when em.dropped_at is null then coalesce(v.vectors, 0) else 0 end,
           coalesce(r.replays, 0), r.mean_overlap, r.min_overlap
    from data.embedding_models em
    left join counted c on c.namespace = em.namespace
    left join covered v on v.model_id = em.model_id
    left join replayed r on r.model_id = em.model_id
    order by em.namespace, em.generation;
end
$$;
comment on function api.model_generations() is 'Each generation: status, window, coverage (vectors over active fragments) and replay overlap, over what the caller may read; org-wide principals only.';

-- service.begin_model_upgrade: the shadow generation of a namespace for a new model, created
-- with its HNSW index, or the one already there for that model (an upgrade resumes). A
-- namespace already building another model, or asked for its active model, refuses.
create or replace function service.begin_model_upgrade(
    p_namespace text, p_name text, p_source text, p_dims int, p_window_days int default 14)
returns int
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    current data.embedding_models;
    shadow data.embedding_models;
begin
    if not exists (select 1 from data.embedding_namespaces n where n.namespace = p_namespace) then
        raise exception 'unknown embedding namespace: %', p_namespace using errcode = '22023';
    end if;
    if p_window_days is null or p_window_days not between 0 and 365 then
        raise exception 'the shadow window is 0 to 365 days, not %', p_window_days using errcode = '22023';
    end if;
    if p_dims is null or p_dims not between 1 and 16000 then
        raise exception 'dimensions must be 1 to 16000, not %', p_dims using errcode = '22023';
    end if;
    select * into current from data.embedding_models m where m.namespace = p_namespace and m.status = 'active';
    if current.model_id is null then
        raise exception 'namespace % has no active model: nothing to upgrade', p_namespace using errcode = '55000',
            hint = 'The first model of a namespace is registered by `contexts ingest` or the service.';
    end if;
    if current.name = p_name then
        raise exception 'namespace % already serves %', p_namespace, p_name using errcode = '22023';
    end if;
    select * into shadow from data.embedding_models m where m.namespace = p_namespace and m.status = 'shadow';
    if shadow.model_id is not null then
        if shadow.name = p_name and shadow.dims = p_dims then
            return shadow.model_id;
        end if;
        raise exception 'namespace % is already being upgraded to % (generation %)', p_namespace, shadow.name,
            shadow.generation using errcode = '55000',
            hint = 'Promote it (`contexts models promote`) or abandon it (`contexts models abandon`) first.';
    end if;
    insert into data.embedding_models (namespace, name, dims, generation, status, source, window_ends_at)
    values (p_namespace, p_name, p_dims,
            (select max(m.generation) from data.embedding_models m where m.namespace = p_namespace) + 1,
            'shadow', nullif(p_source, p_name), now() + make_interval(days => p_window_days))
    returning * into shadow;
    execute format(
        'create index if not exists %I on data.embeddings using hnsw ((embedding::vector(%s)) vector_cosine_ops) where model_id = %s',
        'embeddings_hnsw_model_' || shadow.model_id, shadow.dims, shadow.model_id);
    return shadow.model_id;
end
$$;
comment on function service.begin_model_upgrade(text, text, text, int, int)
    is 'Shadow generation of a namespace for a new model, with its HNSW index (or the existing one: upgrades resume).';

-- service.model_backlog: active fragments of the generation's namespace that lack its vector,
-- in id order after p_after, with what the embedding input is made of (the path of the
-- document that wrote the fragment, else of a live source).
create or replace function service.model_backlog(p_model_id int, p_after bigint default 0, p_limit int default 64)
returns table (fragment_id bigint, org_id text, path text, heading_path text[], text text)
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
    select f.fragment_id, f.org_id,
           coalesce((select d.path from data.documents d where d.org_id = f.org_id and d.doc_id = f.doc_id),
                    (select d.path from data.fragment_sources s join data.documents d on d.org_id = s.org_id and d.doc_id = s.doc_id
                     where s.fragment_id = f.fragment_id and s.retired_at is null
                     order by s.created_at, s.doc_id limit 1), ''),
           f.heading_path, f.text
    from data.fragments f
    join data.embedding_models em on em.model_id = p_model_id and em.namespace = f.namespace
    where f.active and f.fragment_id > p_after
      and not exists (select 1 from data.embeddings e
                      where e.fragment_id = f.fragment_id and e.org_id = f.org_id and e.model_id = p_model_id)
    order by f.fragment_id
    limit p_limit
$$;
comment on function service.model_backlog(int, bigint, int) is 'Active fragments still lacking a vector of this generation, in id order.';

-- service.add_model_vectors: vectors of one generation for existing fragments (an upgrade's
-- batch). A vector already there (ingestion wrote it meanwhile) is kept.
create or replace function service.add_model_vectors(p_model_id int, p_fragment_ids bigint[], p_vectors jsonb)
returns int
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    model data.embedding_models;
    written int;
begin
    select * into model from data.embedding_models m where m.model_id = p_model_id;
    if model.model_id is null or model.dropped_at is not null then
        raise exception 'no live model generation %', p_model_id using errcode = 'P0002';
    end if;
    if jsonb_typeof(p_vectors) is distinct from 'array' or jsonb_array_length(p_vectors) <> cardinality(p_fragment_ids)
       or exists (select 1 from jsonb_array_elements(p_vectors) v
                  where jsonb_typeof(v) <> 'array' or jsonb_array_length(v) <> model.dims) then
        raise exception 'one % -dimension vector per fragment is needed', model.dims using errcode = '22023';
    end if;
    insert into data.embeddings (fragment_id, model_id, org_id, repo_id, persona_id, session_id, embedding)
    select f.fragment_id, model.model_id, f.org_id, f.repo_id, f.persona_id, f.session_id, v.value::text::vector
    from unnest(p_fragment_ids) with ordinality as i(fragment_id, ord)
    join jsonb_array_elements(p_vectors) with ordinality as v(value, ord) on v.ord = i.ord
    join data.fragments f on f.fragment_id = i.fragment_id and f.namespace = model.namespace
    on conflict do nothing;
    get diagnostics written = row_count;
    return written;
end
$$;
comment on function service.add_model_vectors(int, bigint[], jsonb) is 'Write one generation''s vectors for existing fragments (an upgrade batch); existing ones are kept.';

-- service.persona_backlog: persona descriptions embedded with the active model of the
-- generation's namespace but not yet with it (an upgrade embeds them too).
create or replace function service.persona_backlog(p_model_id int)
returns table (org_id text, persona_id text, description text, updated_by text)
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
    select v.org_id, v.persona_id, v.description, v.updated_by
    from data.persona_vectors v
    join data.embedding_models cur on cur.model_id = v.model_id and cur.status = 'active'
    join data.embedding_models em on em.model_id = p_model_id and em.namespace = cur.namespace
    where not exists (select 1 from data.persona_vectors w
                      where w.org_id = v.org_id and w.persona_id = v.persona_id and w.model_id = p_model_id)
    order by v.org_id, v.persona_id
$$;
comment on function service.persona_backlog(int) is 'Persona descriptions an upgrade still has to embed with this generation.';

-- service.add_persona_vector: one persona description's vector for a generation.
create or replace function service.add_persona_vector(
    p_model_id int, p_org_id text, p_persona_id text, p_description text, p_updated_by text, p_vector jsonb)
returns void
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    model data.embedding_models;
begin
    select * into model from data.embedding_models m where m.model_id = p_model_id and m.dropped_at is null;
    if model.model_id is null then
        raise exception 'no live model generation %', p_model_id using errcode = 'P0002';
    end if;
    if jsonb_typeof(p_vector) is distinct from 'array' or jsonb_array_length(p_vector) <> model.dims then
        raise exception 'a % -dimension vector is needed', model.dims using errcode = '22023';
    end if;
    insert into data.persona_vectors (org_id, persona_id, model_id, description, embedding, updated_by)
    values (p_org_id, p_persona_id, p_model_id, p_description, p_vector::text::vector, p_updated_by)
    on conflict do nothing;
end
$$;
comment on function service.add_persona_vector(int, text, text, text, text, jsonb) is 'A persona description''s vector for one generation (an upgrade).';

-- service.promote_model: make a live generation of a namespace active (the shadow, or a
-- retired one within its window: a rollback). Every active fragment of the namespace
-- must have its vector. The generation it replaces is retired and kept until the
-- promoted generation's window ends (then `contexts models drop-retired`).
create or replace function service.promote_model(p_namespace text, p_generation int)
returns table (model_id int, name text, generation int, replaced int, kept_until timestamptz)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    target data.embedding_models;
    current data.embedding_models;
    missing bigint;
begin
    select * into target from data.embedding_models m where m.namespace = p_namespace and m.generation = p_generation
    for update;
    if target.model_id is null then
        raise exception 'namespace % has no generation %', p_namespace, p_generation using errcode = 'P0002';
    end if;
    if target.status = 'active' then
        raise exception 'generation % of % is already active', p_generation, p_namespace using errcode = '22023';
    end if;
    if target.dropped_at is not null then
        raise exception 'generation % of % was dropped on %', p_generation, p_namespace, target.dropped_at
            using errcode = '55000', hint = 'Upgrade to that model again: `contexts models upgrade`.';
    end if;
    select count(*) into missing from service.model_backlog(target.model_id, 0, 2147483647);
    if missing > 0 then
        raise exception '% active fragments of % have no vector of generation % yet', missing, p_namespace, p_generation
            using errcode = '55000', hint = 'Finish the re-embedding: run `contexts models upgrade` again.';
    end if;
    select * into current from data.embedding_models m where m.namespace = p_namespace and m.status = 'active'
    for update;
    update data.embedding_models m
    set status = 'retired', retired_at = now(), window_ends_at = coalesce(target.window_ends_at, now())
    where m.model_id = current.model_id;
    update data.embedding_models m
    set status = 'active', promoted_at = now(), retired_at = null
    where m.model_id = target.model_id;
    model_id := target.model_id; name := target.name; generation := target.generation;
    replaced := current.generation; kept_until := coalesce(target.window_ends_at, now());
    return next;
end
$$;
comment on function service.promote_model(text, int) is 'Make a fully embedded shadow (or a retired generation within its window) the active one; the replaced one is retired and kept until the window ends.';

-- service.drop_model_generation: delete a generation's vectors and HNSW index (the row
-- stays: traces name it). A retired generation only once its window has ended unless
-- p_force; a shadow one (an upgrade abandoned) at any time; never the active one.
create or replace function service.drop_model_generation(p_model_id int, p_force boolean default false)
returns bigint
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    model data.embedding_models;
    removed bigint;
begin
    select * into model from data.embedding_models m where m.model_id = p_model_id for update;
    if model.model_id is null then
        raise exception 'no model generation %', p_model_id using errcode = 'P0002';
    end if;
    if model.status = 'active' then
        raise exception 'generation % of % is active: promote another first', model.generation, model.namespace
            using errcode = '55000';
    end if;
    if model.dropped_at is not null then
        return 0;
    end if;
    if model.status = 'retired' and not p_force and model.window_ends_at > now() then
        raise exception 'generation % of % is kept until % (its window)', model.generation, model.namespace,
            model.window_ends_at using errcode = '55000', hint = 'Wait for the window to end, or force it.';
    end if;
    delete from data.embeddings e where e.model_id = p_model_id;
    get diagnostics removed = row_count;
    delete from data.persona_vectors v where v.model_id = p_model_id;
    execute format('drop index if exists data.%I', 'embeddings_hnsw_model_' || p_model_id);
    update data.embedding_models m
    set status = 'retired', retired_at = coalesce(m.retired_at, now()), dropped_at = now()
    where m.model_id = p_model_id;
    return removed;
end
$$;
comment on function service.drop_model_generation(int, boolean) is 'Delete a retired (window ended) or shadow generation''s vectors and index; the row stays for traces.';

-- service.drop_retired_models: every retired generation whose window has ended, dropped.
create or replace function service.drop_retired_models()
returns table (model_id int, namespace text, name text, generation int, vectors bigint)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    m data.embedding_models;
begin
    -- Locked: a rollback promoting one of these back waits, or is waited for and then
    -- not selected (never the serving generation).
    for m in select * from data.embedding_models em
             where em.status = 'retired' and em.dropped_at is null and em.window_ends_at <= now()
             order by em.model_id for update loop
        model_id := m.model_id; namespace := m.namespace; name := m.name; generation := m.generation;
        vectors := service.drop_model_generation(m.model_id);
        return next;
    end loop;
end
$$;
comment on function service.drop_retired_models() is 'Drop the vectors and index of every retired generation whose window has ended.';

-- service.record_model_replay: one replayed retrieval's outcome for a shadow generation.
create or replace function service.record_model_replay(
    p_model_id int, p_trace_id uuid, p_overlap float8, p_shared_top int, p_top int, p_same_order boolean,
    p_error text default null)
returns bigint
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    trace record;
    new_id bigint;
begin
    select t.org_id, t.principal_id into trace from data.retrieval_traces t where t.trace_id = p_trace_id;
    if trace.org_id is null then
        raise exception 'unknown trace %', p_trace_id using errcode = 'P0002';
    end if;
    insert into data.model_replays (model_id, org_id, principal_id, trace_id, overlap, shared_top, top, same_order, error)
    values (p_model_id, trace.org_id, trace.principal_id, p_trace_id, p_overlap, p_shared_top, p_top, p_same_order,
            p_error)
    returning replay_id into new_id;
    return new_id;
end
$$;
comment on function service.record_model_replay(int, uuid, float8, int, int, boolean, text) is 'Record one retrieval replayed on a shadow generation (its org and principal come from the trace).';

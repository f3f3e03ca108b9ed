-- Ranking profiles (R-RANK-1, docs/adr/0014): the weights of the blended score
--   score = w_rerank * rerank + w_freshness * freshness + w_authority * authority
--         + w_pinned * pinned + w_persona * persona
-- and the freshness half-life per document kind, for an org (its default) or a persona.
-- The service normalises the weights to sum to 1 (app/retrieve/blend.py), so a final
-- score stays in [0, 1]. api.retrieve_candidates returns the profile a request uses.

-- data._ranking_profile: the profile in effect for a request of this org and persona.
-- Each weight is the persona profile's, else the org default's, else the built-in one;
-- half-lives merge per kind the same way. Security invoker: row-level security decides
-- which profiles count (a reader of the persona reads its profile).
create or replace function data._ranking_profile(p_org_id text, p_persona_id text)
returns jsonb
language sql stable
set search_path = pg_catalog, pg_temp
as $$
    select jsonb_build_object(
        'source', case when p.org_id is not null then 'persona' when o.org_id is not null then 'org'
                       else 'built-in' end,
        'persona_id', p.persona_id,
        'w_rerank', coalesce(p.w_rerank, o.w_rerank, 0.75),
        'w_freshness', coalesce(p.w_freshness, o.w_freshness, 0.1),
        'w_authority', coalesce(p.w_authority, o.w_authority, 0.1),
        'w_pinned', coalesce(p.w_pinned, o.w_pinned, 0.05),
        'w_persona', coalesce(p.w_persona, o.w_persona, 0.0),
        'halflife_days', '{"default": 90, "policy": 365}'::jsonb
                         || coalesce(o.halflife_days, '{}') || coalesce(p.halflife_days, '{}'),
        'description', coalesce(p.description, o.description),
        'updated_at', greatest(p.updated_at, o.updated_at))
    from (select 1) one
    left join data.ranking_profiles o on o.org_id = p_org_id and o.persona_id is null
    left join data.ranking_profiles p on p.org_id = p_org_id and p.persona_id = p_persona_id
$$;

-- data._check_halflives: 22023 unless an object of kind (or "default") -> days in (0, 36500].
create or replace function data._check_halflives(p_halflife_days jsonb)
returns void
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
declare
    k record;
begin
    if jsonb_typeof(p_halflife_days) is distinct from 'object' then
        raise exception 'halflife_days must be an object of kind -> days' using errcode = '22023';
    end if;
    for k in select * from jsonb_each(p_halflife_days) loop
        if k.key !~ '^[a-z][a-z0-9-]{0,31}$' then
            raise exception 'halflife_days: % is not a document kind', k.key using errcode = '22023';
        end if;
        if jsonb_typeof(k.value) <> 'number' or (k.value)::text::float8 <= 0 or (k.value)::text::float8 > 36500 then
            raise exception 'halflife_days.%: a half-life is a number of days in (0, 36500]', k.key
                using errcode = '22023';
        end if;
    end loop;
end
$$;

-- service.ranking_profile_set: create or replace the org default (p_persona_id null) or a
-- persona's profile. A null weight or an absent kind inherits. Needs a write grant on
-- the org, or on the persona (42501); weights must be >= 0 and the weights in effect
-- must not all be 0 (22023).
create or replace function service.ranking_profile_set(
    p_org_id text, p_persona_id text,
    p_w_rerank float8 default null, p_w_freshness float8 default null, p_w_authority float8 default null,
    p_w_pinned float8 default null, p_w_persona float8 default null,
    p_halflife_days jsonb default '{}', p_description text default null)
returns table (org_id text, persona_id text, w_rerank float8, w_freshness float8, w_authority float8,
               w_pinned float8, w_persona float8, halflife_days jsonb, description text, updated_by text,
               updated_at timestamptz, effective jsonb)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
#variable_conflict use_column
declare
    me record;
    prof data.ranking_profiles;
    eff jsonb;
begin
    select * into me from data._principal_or_raise();
    perform data._require_write(p_org_id, null, p_persona_id, null);
    perform data._require_org(p_org_id);
    perform data._require_scope(p_org_id, null, p_persona_id);
    if least(p_w_rerank, p_w_freshness, p_w_authority, p_w_pinned, p_w_persona) < 0
       or 'NaN'::float8 in (p_w_rerank, p_w_freshness, p_w_authority, p_w_pinned, p_w_persona)
       or greatest(p_w_rerank, p_w_freshness, p_w_authority, p_w_pinned, p_w_persona) > 1000 then
        raise exception 'weights must be numbers between 0 and 1000' using errcode = '22023';
    end if;
    perform data._check_halflives(coalesce(p_halflife_days, '{}'));
    if length(p_description) > 2000 then
        raise exception 'description: at most 2000 characters' using errcode = '22023';
    end if;
    -- Vectors of another description are evidence no more (the writer embeds the new one).
    delete from data.persona_vectors v
    where v.org_id = p_org_id and v.persona_id = p_persona_id and v.description is distinct from p_description;
    -- One statement that replaces the profile: concurrent setters of one profile each set
    -- it in turn (a delete then an insert made all but one of them a unique violation).
    insert into data.ranking_profiles as r (org_id, persona_id, w_rerank, w_freshness, w_authority, w_pinned,
                                            w_persona, halflife_days, description, updated_by)
    values (p_org_id, p_persona_id, p_w_rerank, p_w_freshness, p_w_authority, p_w_pinned, p_w_persona,
            coalesce(p_halflife_days, '{}'), p_description, me.principal_id)
    on conflict (org_id, coalesce(persona_id, '')) do update
    set w_rerank = excluded.w_rerank, w_freshness = excluded.w_freshness, w_authority = excluded.w_authority,
        w_pinned = excluded.w_pinned, w_persona = excluded.w_persona, halflife_days = excluded.halflife_days,
        description = excluded.description, updated_by = excluded.updated_by, updated_at = clock_timestamp()
    returning * into prof;
    eff := data._ranking_profile(p_org_id, p_persona_id);
    if (eff ->> 'w_rerank')::float8 + (eff ->> 'w_freshness')::float8 + (eff ->> 'w_authority')::float8
       + (eff ->> 'w_pinned')::float8 + (eff ->> 'w_persona')::float8 <= 0 then
        raise exception 'the weights in effect are all 0: nothing would rank' using errcode = '22023';
    end if;
    return query select prof.org_id, prof.persona_id, prof.w_rerank, prof.w_freshness, prof.w_authority,
                        prof.w_pinned, prof.w_persona, prof.halflife_days, prof.description, prof.updated_by,
                        prof.updated_at, eff;
end
$$;
comment on function service.ranking_profile_set(text, text, float8, float8, float8, float8, float8, jsonb, text)
    is 'Create or replace the blend weights and freshness half-lives of an org (persona null) or a persona (write grant there).';

-- service.persona_vectors_set: store the description of a persona's profile embedded with
-- each namespace's active model (p_vectors {"prose": [...], "code": [...]}, as query
-- embeddings are passed; unit vectors, computed by the caller as fragments' are). The
-- description must be the one the persona's profile holds now (22023 otherwise: it
-- changed meanwhile, embed the new one); it replaces the persona's vectors. Needs a
-- write grant on the persona (42501). Returns the models stored: none for a namespace
-- with no active model yet (nothing ingested: set the profile again afterwards).
-- "_generations": {"<model_id>": [...]} adds the vectors of the other live generations.
create or replace function service.persona_vectors_set(
    p_org_id text, p_persona_id text, p_description text, p_vectors jsonb)
returns int
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    me record;
    stored int;
begin
    select * into me from data._principal_or_raise();
    if p_persona_id is null then
        raise exception 'persona vectors need a persona' using errcode = '22023';
    end if;
    perform data._require_write(p_org_id, null, p_persona_id, null);
    perform data._require_org(p_org_id);
    perform data._require_scope(p_org_id, null, p_persona_id);
    if p_description is null or btrim(p_description) = '' then
        raise exception 'description must not be empty' using errcode = '22023';
    end if;
    perform 1 from data.ranking_profiles r
    where r.org_id = p_org_id and r.persona_id = p_persona_id and r.description = p_description
    for share;
    if not found then
        raise exception 'the profile of persona % does not hold this description (set it first, or it changed)',
            p_persona_id using errcode = '22023';
    end if;
    if jsonb_typeof(p_vectors) is distinct from 'object' or p_vectors = '{}'::jsonb
       or exists (select 1 from jsonb_object_keys(p_vectors) k
                  where k not in (select n.namespace from data.embedding_namespaces n) and k <> '_generations')
       or (p_vectors ? '_generations' and jsonb_typeof(p_vectors -> '_generations') <> 'object') then
        raise exception 'vectors must be an object keyed by embedding namespace' using errcode = '22023';
    end if;
    delete from data.persona_vectors v where v.org_id = p_org_id and v.persona_id = p_persona_id;
    insert into data.persona_vectors (org_id, persona_id, model_id, description, embedding, updated_by)
    select p_org_id, p_persona_id, q.model_id, p_description, q.query_vector, me.principal_id
    from data._query_vectors(p_vectors - '_generations') q;
    get diagnostics stored = row_count;
    -- The other live generations (a shadow, a retired one within its window; docs/adr/0021),
    -- so that a promotion or a rollback keeps the persona term. Unknown or dropped ones,
    -- and vectors of the wrong size, are skipped: an upgrade's backfill embeds them.
    insert into data.persona_vectors (org_id, persona_id, model_id, description, embedding, updated_by)
    select p_org_id, p_persona_id, em.model_id, p_description, g.value::text::vector, me.principal_id
    from jsonb_each(coalesce(p_vectors -> '_generations', '{}'::jsonb)) g
    join data.embedding_models em on em.model_id::text = g.key and em.status <> 'active' and em.dropped_at is null
    where jsonb_typeof(g.value) = 'array' and jsonb_array_length(g.value) = em.dims
      and not exists (select 1 from jsonb_array_elements(g.value) x where jsonb_typeof(x) <> 'number')
    on conflict do nothing;
    return stored;
end
$$;
comment on function service.persona_vectors_set(text, text, text, jsonb)
    is 'Store a persona profile''s description embedded per namespace (the persona term''s evidence with its own fragments); write grant on the persona.';

-- service.ranking_profile_delete: remove a stored profile (its scope then inherits again).
-- Unknown (or unreadable): P0002; no write grant: 42501.
create or replace function service.ranking_profile_delete(p_org_id text, p_persona_id text)
returns table (org_id text, persona_id text, w_rerank float8, w_freshness float8, w_authority float8,
               w_pinned float8, w_persona float8, halflife_days jsonb, description text, updated_by text,
               updated_at timestamptz, effective jsonb)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    prof data.ranking_profiles;
begin
    perform data._principal_or_raise();
    perform data._require_write(p_org_id, null, p_persona_id, null);
    delete from data.ranking_profiles r
    where r.org_id = p_org_id and r.persona_id is not distinct from p_persona_id
    returning * into prof;
    delete from data.persona_vectors v where v.org_id = p_org_id and v.persona_id = p_persona_id;
    if prof.org_id is null then
        raise exception 'no ranking profile for % in org %', coalesce(p_persona_id, 'the default'), p_org_id
            using errcode = 'P0002';
    end if;
    return query select prof.org_id, prof.persona_id, prof.w_rerank, prof.w_freshness, prof.w_authority,
                        prof.w_pinned, prof.w_persona, prof.halflife_days, prof.description, prof.updated_by,
                        prof.updated_at, data._ranking_profile(p_org_id, p_persona_id);
end
$$;
comment on function service.ranking_profile_delete(text, text)
    is 'Remove the stored ranking profile of an org (persona null) or persona (write grant there); it inherits again.';

-- api.ranking_profiles: the stored profiles the caller may read (the org default first),
-- each with the profile in effect for its scope.
create or replace function api.ranking_profiles(p_org_id text)
returns table (org_id text, persona_id text, w_rerank float8, w_freshness float8, w_authority float8,
               w_pinned float8, w_persona float8, halflife_days jsonb, description text, updated_by text,
               updated_at timestamptz, effective jsonb)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    perform data._require_read(p_org_id, null, null, null);
    perform data._require_org(p_org_id);
    return query
    select r.org_id, r.persona_id, r.w_rerank, r.w_freshness, r.w_authority, r.w_pinned, r.w_persona,
           r.halflife_days, r.description, r.updated_by, r.updated_at,
           data._ranking_profile(r.org_id, r.persona_id)
    from data.ranking_profiles r
    where r.org_id = p_org_id
    order by r.persona_id nulls first;
end
$$;
comment on function api.ranking_profiles(text) is 'Stored ranking profiles the caller may read, each with the profile in effect.';

-- api.ranking_profile: the profile a retrieval of this org and persona uses (what is
-- stored for that scope, null fields when nothing is, and the profile in effect).
create or replace function api.ranking_profile(p_org_id text, p_persona_id text default null)
returns table (org_id text, persona_id text, w_rerank float8, w_freshness float8, w_authority float8,
               w_pinned float8, w_persona float8, halflife_days jsonb, description text, updated_by text,
               updated_at timestamptz, effective jsonb)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    perform data._require_read(p_org_id, null, p_persona_id, null);
    perform data._require_org(p_org_id);
    perform data._require_scope(p_org_id, null, p_persona_id);
    return query
    select p_org_id, p_persona_id, r.w_rerank, r.w_freshness, r.w_authority, r.w_pinned, r.w_persona,
           coalesce(r.halflife_days, '{}'), r.description, r.updated_by, r.updated_at,
           data._ranking_profile(p_org_id, p_persona_id)
    from (select 1) one
    left join data.ranking_profiles r on r.org_id = p_org_id and r.persona_id is not distinct from p_persona_id;
end
$$;
comment on function api.ranking_profile(text, text)
    is 'The ranking profile stored for an org (persona null) or persona, and the one a retrieval there uses.';

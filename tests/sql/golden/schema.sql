-- Golden: pg_dump --schema-only of a fresh migrate (tests/sql/test_goldens.py), without
-- \restrict keys and version lines; <migrator> is the role that ran the migrations.
-- Regenerate: make goldens  (or: CONTEXTS_UPDATE_GOLDENS=1 python -m pytest tests/sql/test_goldens.py), then review and commit the diff of tests/sql/golden/

--
-- PostgreSQL database dump
--



SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET transaction_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: api; Type: SCHEMA; Schema: -; Owner: <migrator>
--

CREATE SCHEMA api;


ALTER SCHEMA api OWNER TO <migrator>;

--
-- Name: SCHEMA api; Type: COMMENT; Schema: -; Owner: <migrator>
--

COMMENT ON SCHEMA api IS 'Contexts functions: what the service and analysts call.';


--
-- Name: data; Type: SCHEMA; Schema: -; Owner: <migrator>
--

CREATE SCHEMA data;


ALTER SCHEMA data OWNER TO <migrator>;

--
-- Name: SCHEMA data; Type: COMMENT; Schema: -; Owner: <migrator>
--

COMMENT ON SCHEMA data IS 'Contexts tables. Read and write them through the api schema.';


--
-- Name: extensions; Type: SCHEMA; Schema: -; Owner: <migrator>
--

CREATE SCHEMA extensions;


ALTER SCHEMA extensions OWNER TO <migrator>;

--
-- Name: vector; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA extensions;


--
-- Name: EXTENSION vector; Type: COMMENT; Schema: -; Owner: 
--

COMMENT ON EXTENSION vector IS 'vector data type and ivfflat and hnsw access methods';


--
-- Name: active_model(text, text, integer); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.active_model(p_namespace text, p_name text, p_dims integer) RETURNS integer
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    current data.embedding_models;
begin
    select * into current from data.embedding_models m where m.namespace = p_namespace and m.status = 'active';
    if current.model_id is null then
        raise exception 'namespace % has no registered model', p_namespace using errcode = '55000',
            hint = 'Start the service, or run `contexts ingest`, once as the migrator to register it.';
    end if;
    if current.name <> p_name or current.dims <> p_dims then
        raise exception 'namespace % is indexed with % (% dims), not % (% dims)',
            p_namespace, current.name, current.dims, p_name, p_dims using errcode = '55000',
            hint = 'After `contexts models promote`, the service loads the promoted model from its recorded source.';
    end if;
    return current.model_id;
end
$$;


ALTER FUNCTION api.active_model(p_namespace text, p_name text, p_dims integer) OWNER TO <migrator>;

--
-- Name: FUNCTION active_model(p_namespace text, p_name text, p_dims integer); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.active_model(p_namespace text, p_name text, p_dims integer) IS 'Id of the active model of a namespace, checked against the caller''s model.';


--
-- Name: add_fragments(bigint, integer, jsonb); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.add_fragments(p_doc_id bigint, p_doc_version integer, p_chunks jsonb) RETURNS TABLE(ordinal integer, fragment_id bigint, created boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    doc data.documents;
    ver data.document_versions;
    chunk jsonb;
    pos int;
    idx int := 0;
    canonical bigint;
    distance int;
    model record;
    is_negative boolean;
    -- One entry per chunk, in order: its ordinal, its fragment, whether that is new.
    ordinals int[] := '{}';
    fragment_ids bigint[] := '{}';
    created_now boolean[] := '{}';
    -- One entry per new fragment: its id, its chunk's position in p_chunks, its model,
    -- and what later chunks of this document are matched against.
    new_ids bigint[] := '{}';
    new_positions int[] := '{}';
    new_models int[] := '{}';
    new_namespaces text[] := '{}';
    new_hashes text[] := '{}';
    new_simhashes bigint[] := '{}';
    near record;
    -- The references of each chunk's fragment (data._record_links), when the writer
    -- sent them: a whole version's chunks do; re-homed pointers do not.
    links jsonb := '[]';
    has_links boolean := false;
begin
    -- Only documents the bound principal may write exist here: another org's id, or one
    -- outside its write grants, is answered exactly like an unknown id.
    select d.* into doc from data.documents d
    where d.doc_id = p_doc_id and d.org_id = (select c.org_id from data._principal_or_raise() c);
    select v.* into ver from data.document_versions v where v.doc_id = p_doc_id and v.version = p_doc_version;
    if doc.doc_id is not null then
        begin
            perform data._require_write(doc.org_id, doc.repo_id, doc.persona_id, doc.session_id);
        exception when insufficient_privilege then
            doc := null;
        end;
    end if;
    if doc.doc_id is null or ver.doc_id is null then
        raise exception 'unknown document version %/%', p_doc_id, p_doc_version using errcode = 'P0002';
    end if;
    if doc.current_version <> p_doc_version then
        raise exception 'version % of % is superseded by version %', p_doc_version, doc.path, doc.current_version
            using errcode = '22023', hint = 'Each path may appear once per ingestion.';
    end if;
    if jsonb_typeof(p_chunks) is distinct from 'array' then
        raise exception 'chunks must be a JSON array' using errcode = '22023';
    end if;
    -- An anti-pattern or known trap (R-DOC-2): by kind, or marked in the metadata.
    is_negative := doc.kind = 'anti-pattern' or coalesce(ver.metadata -> 'negative' = 'true'::jsonb, false);

    for chunk, pos in select e.value, (e.n - 1)::int from jsonb_array_elements(p_chunks) with ordinality as e(value, n) loop
        idx := coalesce((chunk->>'ordinal')::int, idx + 1);
        canonical := null;
        distance := null;
        -- Exact text among this document's new fragments: the stored ones hold no such
        -- text (that chunk would have matched it), so it wins over any stored near-copy.
        select n.id into canonical
        from unnest(new_ids, new_namespaces, new_hashes) as n(id, namespace, content_hash)
        where n.namespace = chunk->>'namespace' and n.content_hash = chunk->>'content_hash'
        order by n.id limit 1;
        if canonical is null then
            select d.fragment_id, d.distance into canonical, distance
            from data._find_duplicate(doc.org_id, doc.repo_id, doc.persona_id, doc.session_id,
                                      chunk->>'namespace', chunk->>'content_hash', (chunk->>'simhash')::bigint) d;
            if cardinality(new_ids) > 0 and (canonical is null or distance > 0) then
                -- A nearer copy among the new fragments; at equal distance the stored
                -- (older) fragment wins, as it would among stored ones.
                select n.id, bit_count((n.simhash # (chunk->>'simhash')::bigint)::bit(64))::int as distance into near
                from unnest(new_ids, new_namespaces, new_simhashes) as n(id, namespace, simhash)
                where n.namespace = chunk->>'namespace'
                  and bit_count((n.simhash # (chunk->>'simhash')::bigint)::bit(64)) <= 3
                order by 2, 1 limit 1;
                if near.id is not null and (canonical is null or near.distance < distance) then
                    canonical := near.id;
                end if;
            end if;
        end if;
        if canonical is null then
            select m.model_id, m.dims, m.name into model from data.embedding_models m
            where m.namespace = chunk->>'namespace' and m.status = 'active';
            if model.model_id is null then
                raise exception 'namespace % has no active embedding model', chunk->>'namespace' using errcode = '55000';
            end if;
            if jsonb_typeof(chunk->'embedding') is distinct from 'array'
               or jsonb_array_length(chunk->'embedding') <> model.dims then
                raise exception 'chunk % is new and needs a % -dimension embedding from %', idx, model.dims, model.name
                    using errcode = '22023';
            end if;
            -- The namespace's other live generations (a shadow being built, a retired one
            -- within its window): {"model_id": vector} in "generations". One the writer did
            -- not send (it started before the upgrade) is left to `contexts models upgrade`.
            if jsonb_typeof(chunk->'generations') = 'object'
               and exists (select 1 from data.embedding_models m
                           where m.namespace = chunk->>'namespace' and m.status <> 'active' and m.dropped_at is null
                             and chunk->'generations' ? m.model_id::text
                             and (jsonb_typeof(chunk->'generations'->(m.model_id::text)) <> 'array'
                                  or jsonb_array_length(chunk->'generations'->(m.model_id::text)) <> m.dims)) then
                raise exception 'chunk % has a vector of the wrong size for a model generation', idx
                    using errcode = '22023';
            end if;
            canonical := nextval('data.fragment_id_seq');
            new_ids := new_ids || canonical;
            new_positions := new_positions || pos;
            new_models := new_models || model.model_id;
            new_namespaces := new_namespaces || (chunk->>'namespace');
            new_hashes := new_hashes || (chunk->>'content_hash');
            new_simhashes := new_simhashes || (chunk->>'simhash')::bigint;
            created_now := created_now || true;
        elsif not canonical = any (new_ids) then
            update data.fragments f set active = true
            where f.fragment_id = canonical and f.org_id = doc.org_id and not f.active;
            -- Stored before readings: the chunk's is the fragment's when the text is the same.
            update data.fragments f set reading = decode(chunk->>'reading', 'base64')
            where f.fragment_id = canonical and f.org_id = doc.org_id and f.reading is null
              and chunk ? 'reading' and f.content_hash = chunk->>'content_hash';
            -- A new version of the document that wrote the fragment decides its flag again.
            update data.fragments f set negative = is_negative
            where f.fragment_id = canonical and f.org_id = doc.org_id and f.doc_id = p_doc_id
              and f.negative is distinct from is_negative;
            created_now := created_now || false;
        else
            created_now := created_now || false;
        end if;
        ordinals := ordinals || idx;
        fragment_ids := fragment_ids || canonical;

        if chunk ? 'references' then
            has_links := true;
            links := links || jsonb_build_object('fragment_id', canonical, 'references', chunk->'references');
        end if;
    end loop;

    insert into data.fragments (
        fragment_id, org_id, repo_id, persona_id, session_id, doc_id, doc_version, namespace, kind, owner,
        owner_source, heading_path, symbol, text, content_hash, token_count, chunker_version, simhash, tsv,
        created_at, updated_at, negative, reading)
    select n.id, doc.org_id, doc.repo_id, doc.persona_id, doc.session_id, p_doc_id, p_doc_version,
           c->>'namespace', doc.kind, coalesce(doc.owner, 'unowned'), doc.owner_source,
           coalesce(array(select jsonb_array_elements_text(c->'heading_path')), '{}'),
           c->>'symbol', c->>'text', c->>'content_hash', (c->>'token_count')::int,
           c->>'chunker_version', (c->>'simhash')::bigint,
           api.lexical_document(c->>'lexical_heading', c->>'text'),
           coalesce(ver.source_ts, now()), coalesce(ver.source_ts, now()), is_negative,
           decode(c->>'reading', 'base64')
    from unnest(new_ids, new_positions) as n(id, pos)
    cross join lateral (select p_chunks -> n.pos as c) x
    order by n.id;

    insert into data.embeddings (fragment_id, model_id, org_id, repo_id, persona_id, session_id, embedding)
    select n.id, n.model_id, doc.org_id, doc.repo_id, doc.persona_id, doc.session_id,
           (p_chunks -> n.pos -> 'embedding')::text::vector
    from unnest(new_ids, new_positions, new_models) as n(id, pos, model_id)
    union all
    select n.id, m.model_id, doc.org_id, doc.repo_id, doc.persona_id, doc.session_id,
           (p_chunks -> n.pos -> 'generations' -> (m.model_id::text))::text::vector
    from unnest(new_ids, new_positions, new_namespaces) as n(id, pos, namespace)
    join data.embedding_models m
      on m.namespace = n.namespace and m.status <> 'active' and m.dropped_at is null
     and jsonb_typeof(p_chunks -> n.pos -> 'generations') = 'object'
     and (p_chunks -> n.pos -> 'generations') ? m.model_id::text;

    insert into data.fragment_sources (fragment_id, org_id, doc_id, doc_version, ordinal, anchor, start_line,
                                       end_line, content_hash)
    select s.fragment_id, doc.org_id, p_doc_id, p_doc_version, s.ordinal, coalesce(c->>'anchor', ''),
           coalesce((c->>'start_line')::int, 1), coalesce((c->>'end_line')::int, 1), c->>'content_hash'
    from unnest(fragment_ids, ordinals) with ordinality as s(fragment_id, ordinal, n)
    cross join lateral (select p_chunks -> (s.n::int - 1) as c) x
    order by s.n;

    if has_links then
        perform data._record_links(doc, links);
    end if;
    -- Windows of this document's fragments and of those it supersedes or is superseded
    -- by (sql/functions/48_validity.sql).
    perform data._refresh_validity(doc.org_id, array[doc.doc_id]);
    if cardinality(new_ids) > 0 then
        perform data._analyze_new_tenant(doc.org_id);
    end if;
    return query select s.ordinal, s.fragment_id, s.created
                 from unnest(ordinals, fragment_ids, created_now) with ordinality as s(ordinal, fragment_id, created, n)
                 order by s.n;
exception when check_violation or not_null_violation or invalid_text_representation or unique_violation then
    raise exception 'invalid chunk: %', sqlerrm using errcode = '22023';
end
$$;


ALTER FUNCTION api.add_fragments(p_doc_id bigint, p_doc_version integer, p_chunks jsonb) OWNER TO <migrator>;

--
-- Name: FUNCTION add_fragments(p_doc_id bigint, p_doc_version integer, p_chunks jsonb); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.add_fragments(p_doc_id bigint, p_doc_version integer, p_chunks jsonb) IS 'Write one document version''s chunks (the bound principal needs write grants): new fragments or pointers to canonical ones.';


--
-- Name: add_model_vectors(integer, bigint[], jsonb); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.add_model_vectors(p_model_id integer, p_fragment_ids bigint[], p_vectors jsonb) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
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


ALTER FUNCTION api.add_model_vectors(p_model_id integer, p_fragment_ids bigint[], p_vectors jsonb) OWNER TO <migrator>;

--
-- Name: FUNCTION add_model_vectors(p_model_id integer, p_fragment_ids bigint[], p_vectors jsonb); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.add_model_vectors(p_model_id integer, p_fragment_ids bigint[], p_vectors jsonb) IS 'Write one generation''s vectors for existing fragments (an upgrade batch); existing ones are kept.';


--
-- Name: add_persona_vector(integer, text, text, text, text, jsonb); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.add_persona_vector(p_model_id integer, p_org_id text, p_persona_id text, p_description text, p_updated_by text, p_vector jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
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


ALTER FUNCTION api.add_persona_vector(p_model_id integer, p_org_id text, p_persona_id text, p_description text, p_updated_by text, p_vector jsonb) OWNER TO <migrator>;

--
-- Name: FUNCTION add_persona_vector(p_model_id integer, p_org_id text, p_persona_id text, p_description text, p_updated_by text, p_vector jsonb); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.add_persona_vector(p_model_id integer, p_org_id text, p_persona_id text, p_description text, p_updated_by text, p_vector jsonb) IS 'A persona description''s vector for one generation (an upgrade).';


--
-- Name: authenticate(text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.authenticate(p_token text) RETURNS TABLE(org_id text, principal_id text, key_id text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    k record;
begin
    select a.key_id, a.org_id, a.principal_id into k
    from data.api_keys a
    join data.principals p on p.org_id = a.org_id and p.principal_id = a.principal_id
    where a.key_hash = sha256(convert_to(coalesce(p_token, ''), 'UTF8'))
      and a.revoked_at is null and p.disabled_at is null;
    if k.key_id is null then
        raise exception 'invalid or revoked API key' using errcode = '28000';
    end if;
    -- At most once a minute, and never waiting: a concurrent request holding the row
    -- (until its transaction ends) just skips the refresh.
    -- A hot standby (a read replica) writes nothing: the primary stamps the key when the
    -- service checks it there (docs/adr/0020-read-replicas.md).
    if not pg_is_in_recovery() then
        update data.api_keys a set last_used_at = now()
        where a.key_id = (select b.key_id from data.api_keys b
                          where b.key_id = k.key_id and (b.last_used_at is null or b.last_used_at < now() - interval '1 minute')
                          for update skip locked);
    end if;
    perform data._bind(k.org_id, k.principal_id);
    return query select k.org_id, k.principal_id, k.key_id;
end
$$;


ALTER FUNCTION api.authenticate(p_token text) OWNER TO <migrator>;

--
-- Name: FUNCTION authenticate(p_token text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.authenticate(p_token text) IS 'Bind the principal of an API key to the current transaction.';


--
-- Name: authorize_write(text, text, text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.authorize_write(p_org_id text, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    -- The very check a write makes; the block's own error undoes what it did (opening
    -- a new session), while a refusal (42501) passes through to the caller.
    perform data._require_write(p_org_id, p_repo_id, p_persona_id, p_session_id);
    raise exception 'authorized' using errcode = 'CTXOK';
exception when sqlstate 'CTXOK' then
    null;
end
$$;


ALTER FUNCTION api.authorize_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION authorize_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.authorize_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) IS 'Raise unless the bound principal may write into this scope; changes nothing.';


--
-- Name: begin_document(text, text, text, text, text, text, text, text, text, text, timestamp with time zone, jsonb, text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text DEFAULT NULL::text, p_author text DEFAULT NULL::text, p_source_ts timestamp with time zone DEFAULT NULL::timestamp with time zone, p_metadata jsonb DEFAULT '{}'::jsonb, p_owner text DEFAULT NULL::text, p_owner_source text DEFAULT NULL::text) RETURNS TABLE(doc_id bigint, version integer, changed boolean, rehome jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    existing data.documents;
    current_hash text;
    new_version int;
    named record;
    problem text;
begin
    perform data._require_write(p_org_id, p_repo_id, p_persona_id, p_session_id);
    -- Only what every reader can decode is stored (app/readable.py says the same).
    problem := coalesce(data._path_problem(p_path), data._metadata_problem(coalesce(p_metadata, '{}')));
    if problem is not null then
        raise exception 'invalid document: %', problem using errcode = '22023';
    end if;
    perform data._readable_time(p_source_ts, 'the document''s timestamp');
    perform api.ensure_scope(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform pg_advisory_xact_lock(hashtextextended('contexts.ingest:' || p_org_id, 0));

    select d.* into existing from data.documents d
    where d.org_id = p_org_id
      and coalesce(d.repo_id, '') = coalesce(p_repo_id, '')
      and coalesce(d.persona_id, '') = coalesce(p_persona_id, '')
      and coalesce(d.session_id, '') = coalesce(p_session_id, '')
      and d.path = p_path
    for update;

    if found then
        select v.content_hash into current_hash from data.document_versions v
        where v.doc_id = existing.doc_id and v.version = existing.current_version;
        -- A deleted document written again comes back as a new version, even unchanged.
        if current_hash = p_content_hash and existing.deleted_at is null then
            return query select existing.doc_id, existing.current_version, false, '[]'::jsonb;
            return;
        end if;
        new_version := existing.current_version + 1;
        select * into named from data._resolve_owner(p_org_id, p_owner, p_owner_source,
                                                     existing.owner, existing.owner_source);
        update data.documents d
        set current_version = new_version, kind = p_kind, owner = named.owner, owner_source = named.owner_source,
            updated_at = now(), deleted_at = null, deleted_by = null
        where d.doc_id = existing.doc_id;
        if named.owner is distinct from existing.owner or named.owner_source is distinct from existing.owner_source then
            -- The fragments this document brought in follow its owner.
            update data.fragments f set owner = named.owner, owner_source = named.owner_source
            where f.org_id = p_org_id and f.doc_id = existing.doc_id
              and (f.owner, f.owner_source) is distinct from (named.owner, named.owner_source);
        end if;
    else
        select * into named from data._resolve_owner(p_org_id, p_owner, p_owner_source, null, null);
        insert into data.documents (org_id, repo_id, persona_id, session_id, path, kind, current_version, owner,
                                    owner_source)
        values (p_org_id, p_repo_id, p_persona_id, p_session_id, p_path, p_kind, 1, named.owner, named.owner_source)
        returning * into existing;
        new_version := 1;
    end if;

    insert into data.document_versions (doc_id, version, content_hash, content, language, author, source_ts, metadata)
    values (existing.doc_id, new_version, p_content_hash, p_content, p_language, p_author, p_source_ts,
            coalesce(p_metadata, '{}'));

    return query select existing.doc_id, new_version, true, data._retire_sources(existing.doc_id, new_version);
exception when check_violation or not_null_violation then
    raise exception 'invalid document: %', sqlerrm using errcode = '22023';
end
$$;


ALTER FUNCTION api.begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text, p_author text, p_source_ts timestamp with time zone, p_metadata jsonb, p_owner text, p_owner_source text) OWNER TO <migrator>;

--
-- Name: FUNCTION begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text, p_author text, p_source_ts timestamp with time zone, p_metadata jsonb, p_owner text, p_owner_source text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text, p_author text, p_source_ts timestamp with time zone, p_metadata jsonb, p_owner text, p_owner_source text) IS 'Start ingesting a document (the bound principal needs write grants on its scope): no-op when unchanged (and not deleted), else a new version that retires the old pointers; returns near-duplicate pointers of other documents that must be re-homed (see data._retire_sources).';


--
-- Name: begin_model_upgrade(text, text, text, integer, integer); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.begin_model_upgrade(p_namespace text, p_name text, p_source text, p_dims integer, p_window_days integer DEFAULT 14) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
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


ALTER FUNCTION api.begin_model_upgrade(p_namespace text, p_name text, p_source text, p_dims integer, p_window_days integer) OWNER TO <migrator>;

--
-- Name: FUNCTION begin_model_upgrade(p_namespace text, p_name text, p_source text, p_dims integer, p_window_days integer); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.begin_model_upgrade(p_namespace text, p_name text, p_source text, p_dims integer, p_window_days integer) IS 'Shadow generation of a namespace for a new model, with its HNSW index (or the existing one: upgrades resume).';


--
-- Name: bind_principal(text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.bind_principal(p_org_id text, p_principal_id text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    perform data._require_principal(p_org_id, p_principal_id, p_enabled => true);
    perform data._bind(p_org_id, p_principal_id);
end
$$;


ALTER FUNCTION api.bind_principal(p_org_id text, p_principal_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION bind_principal(p_org_id text, p_principal_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.bind_principal(p_org_id text, p_principal_id text) IS 'Administrators: act as a principal for the rest of this transaction.';


--
-- Name: codeowners_file(text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.codeowners_file(p_org_id text, p_repo_id text) RETURNS TABLE(doc_id bigint, path text, content text)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    select d.doc_id, d.path, v.content
    from data.documents d
    join data.document_versions v on v.doc_id = d.doc_id and v.version = d.current_version
    where d.org_id = p_org_id and d.repo_id = p_repo_id and d.persona_id is null and d.session_id is null
      and d.deleted_at is null and d.path in ('.github/CODEOWNERS', 'CODEOWNERS', 'docs/CODEOWNERS')
    order by array_position(array['.github/CODEOWNERS', 'CODEOWNERS', 'docs/CODEOWNERS'], d.path)
    limit 1
$$;


ALTER FUNCTION api.codeowners_file(p_org_id text, p_repo_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION codeowners_file(p_org_id text, p_repo_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.codeowners_file(p_org_id text, p_repo_id text) IS 'The repo''s ingested CODEOWNERS file (.github/, root, then docs/), if any: what ingestion resolves owners against.';


--
-- Name: context_add_version(bigint, bigint[], bigint[], text[], text, jsonb, bigint[]); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.context_add_version(p_context_id bigint, p_fragment_ids bigint[] DEFAULT '{}'::bigint[], p_doc_ids bigint[] DEFAULT '{}'::bigint[], p_path_globs text[] DEFAULT '{}'::text[], p_note text DEFAULT ''::text, p_built_from jsonb DEFAULT '{}'::jsonb, p_query_fragment_ids bigint[] DEFAULT '{}'::bigint[]) RETURNS TABLE(context_id bigint, ref text, version integer, fragment_count integer, built_from jsonb, note text, created_by text, created_at timestamp with time zone)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    me record;
    ctx data.contexts;
    wanted bigint[];
    readable bigint[];
    missing bigint;
    outside bigint;
    glob_ids bigint[] := '{}';
    doc_ids bigint[] := '{}';
    g text;
    next_version int;
    members bigint[];
    row_count int;
    query_kept bigint[] := '{}';
    query_left_out int := 0;
begin
    select * into me from data._principal_or_raise();
    ctx := data._writable_context(p_context_id);
    if cardinality(coalesce(p_fragment_ids, '{}')) + cardinality(coalesce(p_doc_ids, '{}'))
       + cardinality(coalesce(p_path_globs, '{}')) + cardinality(coalesce(p_query_fragment_ids, '{}')) = 0 then
        raise exception 'a version is built from fragment ids, documents, path globs or a query' using errcode = '22023';
    end if;
    if cardinality(coalesce(p_path_globs, '{}')) > 32
       or exists (select 1 from unnest(p_path_globs) x where x is null or length(x) not between 1 and 1024) then
        raise exception 'path globs: at most 32, each 1 to 1024 characters' using errcode = '22023';
    end if;
    if length(coalesce(p_note, '')) > 2000 or jsonb_typeof(coalesce(p_built_from, '{}')) <> 'object' then
        raise exception 'a version note is at most 2000 characters, built_from an object' using errcode = '22023';
    end if;
    -- Fragment ids: each one readable by the caller (else unknown), within the scope.
    wanted := array(select distinct x from unnest(coalesce(p_fragment_ids, '{}')) x);
    readable := data._readable_fragments(ctx.org_id, wanted);
    select x into missing from unnest(wanted) x where not x = any (readable) or x is null limit 1;
    if missing is not null or array_position(wanted, null) is not null then
        raise exception 'unknown fragment: %', coalesce(missing::text, 'null') using errcode = 'P0002';
    end if;
    select f.fragment_id into outside from data.fragments f
    where f.fragment_id = any (wanted)
      and not ((f.repo_id is null or f.repo_id is not distinct from ctx.repo_id) and (f.persona_id is null or f.persona_id is not distinct from ctx.persona_id)
               and (f.session_id is null or f.session_id is not distinct from ctx.session_id))
    limit 1;
    if outside is not null then
        raise exception 'fragment % lies outside the context''s scope', outside using errcode = '22023',
            hint = 'A context holds fragments of its own scope and of the scopes above it (org-wide ones).';
    end if;
    select f.fragment_id into outside from data.fragments f where f.fragment_id = any (wanted) and not f.active limit 1;
    if outside is not null then
        raise exception 'fragment % is no longer live (its documents were deleted or changed)', outside
            using errcode = '22023';
    end if;
    -- What a saved query found: the live fragments the caller may read within the scope,
    -- after the named ones, in the query's order; the rest counted.
    if cardinality(coalesce(p_query_fragment_ids, '{}')) > 0 then
        query_kept := array(
            select q.x from (select distinct on (u.x) u.x, u.n
                             from unnest(p_query_fragment_ids) with ordinality as u(x, n)
                             where u.x is not null order by u.x, u.n) q
            join data.fragments f on f.fragment_id = q.x and f.org_id = ctx.org_id and f.active
            where q.x = any (data._readable_fragments(ctx.org_id, p_query_fragment_ids))
              and not q.x = any (wanted)
              and (f.repo_id is null or f.repo_id is not distinct from ctx.repo_id)
              and (f.persona_id is null or f.persona_id is not distinct from ctx.persona_id)
              and (f.session_id is null or f.session_id is not distinct from ctx.session_id)
            order by q.n);
        query_left_out := (select count(distinct x) from unnest(p_query_fragment_ids) x
                           where x is not null and not x = any (wanted))::int - cardinality(query_kept);
    end if;
    -- Documents: readable (else unknown) and within the scope; their live fragments.
    doc_ids := array(select distinct x from unnest(coalesce(p_doc_ids, '{}')) x);
    select x into missing from unnest(doc_ids) x
    where not exists (
        select 1 from data.documents d
        where d.doc_id = x and d.org_id = ctx.org_id
          and (d.repo_id is null or data.acl_org_wide() or d.repo_id = any (data.acl_repos()))
          and (d.persona_id is null or data.acl_org_wide() or d.persona_id = any (data.acl_personas()))
          and (d.session_id is null or d.session_id = any (data.acl_sessions())))
    limit 1;
    if missing is not null or array_position(doc_ids, null) is not null then
        raise exception 'unknown document: %', coalesce(missing::text, 'null') using errcode = 'P0002';
    end if;
    select d.doc_id into outside from data.documents d
    where d.doc_id = any (doc_ids)
      and not ((d.repo_id is null or d.repo_id is not distinct from ctx.repo_id) and (d.persona_id is null or d.persona_id is not distinct from ctx.persona_id)
               and (d.session_id is null or d.session_id is not distinct from ctx.session_id))
    limit 1;
    if outside is not null then
        raise exception 'document % lies outside the context''s scope', outside using errcode = '22023';
    end if;
    -- Globs: documents of the Context's scope (and those above it) the caller may read.
    foreach g in array coalesce(p_path_globs, '{}') loop
        glob_ids := glob_ids || array(
            select d.doc_id from data.documents d
            where d.org_id = ctx.org_id and d.path ~ data._glob_regex(g)
              and (d.repo_id is null or d.repo_id is not distinct from ctx.repo_id) and (d.persona_id is null or d.persona_id is not distinct from ctx.persona_id)
              and (d.session_id is null or d.session_id is not distinct from ctx.session_id)
              and (d.repo_id is null or data.acl_org_wide() or d.repo_id = any (data.acl_repos()))
              and (d.persona_id is null or data.acl_org_wide() or d.persona_id = any (data.acl_personas()))
              and (d.session_id is null or d.session_id = any (data.acl_sessions()))
            order by d.path, d.doc_id);
    end loop;
    -- In order: the ids as given, then each document's live fragments in source order.
    select array_agg(m.fragment_id order by m.first) into members
    from (select x.fragment_id, min(x.ord) as first
          from (select w.x as fragment_id, w.n::float8 as ord
                from unnest(coalesce(p_fragment_ids, '{}') || query_kept) with ordinality as w(x, n)
                union all
                select s.fragment_id, 1e6 + dd.n * 1e5 + s.ordinal
                from unnest(doc_ids || glob_ids) with ordinality as dd(doc_id, n)
                join data.documents d on d.doc_id = dd.doc_id
                join data.fragment_sources s on s.doc_id = d.doc_id and s.doc_version = d.current_version
                join data.fragments f on f.fragment_id = s.fragment_id
                where s.retired_at is null and f.active and s.content_hash = f.content_hash) x
          group by x.fragment_id) m;
    row_count := coalesce(cardinality(members), 0);
    if row_count = 0 and query_left_out > 0 then
        raise exception 'nothing to bundle: the query found % fragments, none within the context''s scope',
            query_left_out using errcode = '22023',
            hint = 'A context holds fragments of its own scope and of the scopes above it: an org context, org-wide ones only.';
    end if;
    if row_count = 0 then
        raise exception 'nothing to bundle: no readable fragment matches' using errcode = '22023';
    end if;
    if row_count > 2000 then
        raise exception 'a version holds at most 2000 fragments (% matched)', row_count using errcode = '22023';
    end if;
    -- One version number at a time per Context.
    perform 1 from data.contexts c where c.context_id = ctx.context_id for update;
    select coalesce(max(v.version), 0) + 1 into next_version from data.context_versions v
    where v.context_id = ctx.context_id;
    insert into data.context_versions (context_id, org_id, version, built_from, note, fragment_count, created_by)
    values (ctx.context_id, ctx.org_id, next_version,
            coalesce(p_built_from, '{}') || jsonb_strip_nulls(jsonb_build_object(
                'fragment_ids', nullif(to_jsonb(coalesce(p_fragment_ids, '{}')), '[]'),
                'doc_ids', nullif(to_jsonb(doc_ids), '[]'),
                'path_globs', nullif(to_jsonb(coalesce(p_path_globs, '{}')), '[]'),
                'query_fragment_ids', nullif(to_jsonb(query_kept), '[]'),
                'query_outside_scope', nullif(query_left_out, 0))),
            coalesce(p_note, ''), row_count, me.principal_id);
    -- Each member cited from the document version it is read from now: a live exact
    -- source (near-duplicates point at the canonical text too), the newest first.
    insert into data.context_members (context_id, version, org_id, ordinal, fragment_id, doc_id, doc_version)
    select ctx.context_id, next_version, ctx.org_id, m.n, m.fragment_id, src.doc_id, src.doc_version
    from unnest(members) with ordinality as m(fragment_id, n)
    left join lateral (
        select s.doc_id, s.doc_version from data.fragment_sources s
        join data.fragments f on f.fragment_id = s.fragment_id
        where s.fragment_id = m.fragment_id
        order by s.retired_at is null desc, s.content_hash = f.content_hash desc, s.created_at desc, s.doc_id
        limit 1) src on true;
    return query
    select v.context_id, 'ctx_' || v.context_id || '@' || v.version, v.version, v.fragment_count, v.built_from,
           v.note, v.created_by, v.created_at
    from data.context_versions v where v.context_id = ctx.context_id and v.version = next_version;
end
$$;


ALTER FUNCTION api.context_add_version(p_context_id bigint, p_fragment_ids bigint[], p_doc_ids bigint[], p_path_globs text[], p_note text, p_built_from jsonb, p_query_fragment_ids bigint[]) OWNER TO <migrator>;

--
-- Name: FUNCTION context_add_version(p_context_id bigint, p_fragment_ids bigint[], p_doc_ids bigint[], p_path_globs text[], p_note text, p_built_from jsonb, p_query_fragment_ids bigint[]); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.context_add_version(p_context_id bigint, p_fragment_ids bigint[], p_doc_ids bigint[], p_path_globs text[], p_note text, p_built_from jsonb, p_query_fragment_ids bigint[]) IS 'Freeze a new, immutable version of a Context from fragment ids, documents, path globs and what a saved query found (write grant on its scope).';


--
-- Name: context_candidates(text, text[], text, jsonb, jsonb, integer, boolean, text, text, text, boolean); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.context_candidates(p_org_id text, p_refs text[], p_query text DEFAULT NULL::text, p_query_embeddings jsonb DEFAULT '{}'::jsonb, p_fusion jsonb DEFAULT '{"method": "weighted", "dense_weight": 0.5, "lexical_weight": {"code": 0.2}}'::jsonb, p_rrf_k integer DEFAULT 60, p_include_retired boolean DEFAULT false, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_scoped boolean DEFAULT true) RETURNS TABLE(fragment_id bigint, lexical_rank integer, lexical_score double precision, dense_rank integer, dense_similarity double precision, fused_score double precision, doc_id bigint, doc_version integer, path text, anchor text, repo_id text, namespace text, kind text, owner text, heading_path text[], symbol text, text text, token_count integer, chunker_version text, embedding_model text, updated_at timestamp with time zone, lexical_norm double precision, dense_norm double precision, lexical_weight double precision, dense_weight double precision, negative boolean, pin_id bigint, pin_rank integer, persona_similarity double precision, authority double precision, authority_refreshed_at timestamp with time zone, valid_from timestamp with time zone, valid_until timestamp with time zone, reading bytea, profile jsonb, context text, context_ordinal integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    me record;
    retired text;
    refs text[];
    ref_contexts bigint[];
    ref_versions int[];
    ref_retired boolean[];
    ref_shared boolean[];
    org_wide boolean;
    my_repos text[];
    my_personas text[];
    my_sessions text[];
    ids bigint[];
    picked_refs int[];
    picked_ordinals int[];
    picked_docs bigint[];
    picked_versions int[];
    member_orgs text[];
    has_query boolean := p_query is not null and btrim(p_query) <> '';
    lexical_on boolean;
    dense_on boolean;
    lex_ids bigint[] := '{}';
    lex_scores float8[] := '{}';
    dense_ids bigint[] := '{}';
    dense_sims float8[] := '{}';
    m record;
begin
    select * into me from data._principal_or_raise();
    if p_org_id is distinct from me.org_id then
        raise exception 'principal % may not read org %', me.principal_id, p_org_id using errcode = '42501';
    end if;
    if p_rrf_k is null or p_rrf_k < 1 then
        raise exception 'rrf_k must be positive' using errcode = '22023';
    end if;
    perform data._check_fusion(p_fusion);
    if p_scoped is null then
        raise exception 'p_scoped must be true or false' using errcode = '22023';
    end if;
    if p_scoped then
        perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
        perform data._require_scope(p_org_id, p_repo_id, p_persona_id);
    end if;
    select array_agg(r.ref order by r.ordinal), array_agg(r.context_id order by r.ordinal),
           array_agg(r.version order by r.ordinal), array_agg(r.retired order by r.ordinal),
           array_agg(r.via_subscription order by r.ordinal)
      into refs, ref_contexts, ref_versions, ref_retired, ref_shared
    from data._resolve_context_refs(p_refs, p_scoped, p_repo_id, p_persona_id, p_session_id) r;
    org_wide := data.acl_org_wide();
    my_repos := data.acl_repos();
    my_personas := data.acl_personas();
    my_sessions := data.acl_sessions();
    retired := refs[array_position(ref_retired, true)];
    if retired is not null and not p_include_retired then
        raise exception 'context % is retired', retired using errcode = '55000',
            hint = 'Read it by reference (GET /contexts/{ref}) for audit; retrieval skips retired contexts.';
    end if;
    -- Each fragment once, from the first reference naming it, in bundle order: the
    -- members the reader may read now (see above), cited from the document version they
    -- were bundled from while that document lives, else from a live source.
    select coalesce(array_agg(k.fragment_id order by k.ref_n, k.ordinal), '{}'),
           coalesce(array_agg(k.ref_n order by k.ref_n, k.ordinal), '{}'),
           coalesce(array_agg(k.ordinal order by k.ref_n, k.ordinal), '{}'),
           coalesce(array_agg(k.doc_id order by k.ref_n, k.ordinal), '{}'),
           coalesce(array_agg(k.doc_version order by k.ref_n, k.ordinal), '{}')
      into ids, picked_refs, picked_ordinals, picked_docs, picked_versions
    from (select distinct on (mb.fragment_id) mb.fragment_id, r.n as ref_n, mb.ordinal,
                 case when md.deleted_at is null then mb.doc_id else ls.doc_id end as doc_id,
                 case when md.deleted_at is null then mb.doc_version else ls.doc_version end as doc_version
          from unnest(ref_contexts, ref_versions, ref_shared) with ordinality as r(context_id, version, shared, n)
          join data.contexts c on c.context_id = r.context_id
          join data.context_members mb on mb.context_id = r.context_id and mb.version = r.version
          join data.fragments f on f.fragment_id = mb.fragment_id and f.org_id = mb.org_id and f.active
          left join data.documents md on md.doc_id = mb.doc_id
          left join lateral (
              select s.doc_id, s.doc_version from data.fragment_sources s
              join data.documents d on d.doc_id = s.doc_id and d.deleted_at is null
              where s.fragment_id = f.fragment_id and s.retired_at is null
              order by s.content_hash = f.content_hash desc, s.created_at desc, s.doc_id
              limit 1) ls on md.deleted_at is not null or md.doc_id is null
          where f.org_id = c.org_id
            and case when r.shared
                     -- Shared by a subscription: org and repo material of its Context only.
                     then c.persona_id is null and c.session_id is null
                          and f.persona_id is null and f.session_id is null
                          and (f.repo_id is null or f.repo_id = c.repo_id)
                     -- Its own scope: the fragments' policy, and the request's scope.
                     else f.org_id = me.org_id
                          and (f.repo_id is null or org_wide or f.repo_id = any (my_repos))
                          and (f.persona_id is null or org_wide or f.persona_id = any (my_personas))
                          and (f.session_id is null or f.session_id = any (my_sessions))
                          and (not p_scoped or data._in_scope(f.repo_id, f.persona_id, f.session_id,
                                                                 p_repo_id, p_persona_id, p_session_id))
                end
            and (md.deleted_at is null or ls.doc_id is not null)
          order by mb.fragment_id, r.n, mb.ordinal) k;
    member_orgs := array(select distinct f.org_id from data.fragments f where f.fragment_id = any (ids));
    lexical_on := has_query;
    dense_on := has_query and jsonb_typeof(p_query_embeddings) = 'object' and p_query_embeddings <> '{}';
    if lexical_on then
        -- BM25 over the bundles alone (the formula of data._bm25_scores, k1 1.2, b 0.75).
        with postings as (
            -- Postings exist for active fragments only; an inactive member matches nothing.
            select p.fragment_id, p.term, p.tf, p.dl from data.bm25_postings p
            where p.fragment_id = any (ids) and p.org_id = any (member_orgs)
        ), corpus as (
            select cardinality(ids)::float8 as n,
                   coalesce((select avg(x.dl) from (select distinct on (p.fragment_id) p.dl from postings p
                                                    order by p.fragment_id) x), 1)::float8 as avgdl
        ), terms as (
            select distinct t.lexeme as term from unnest(api.lexical_tsvector(p_query)) t
        ), weighted as (
            select p.term, ln(1.0::float8 + (c.n - count(*)::float8 + 0.5) / (count(*)::float8 + 0.5)) as idf
            from postings p cross join corpus c
            where p.term in (select t.term from terms t)
            group by p.term, c.n
        ), scored as (
            select p.fragment_id,
                   sum(w.idf * (p.tf::float8 * 2.2) / (p.tf::float8 + 1.2 * (0.25 + 0.75 * p.dl::float8 / c.avgdl))) as score
            from postings p join weighted w on w.term = p.term cross join corpus c
            group by p.fragment_id
        )
        select coalesce(array_agg(s.fragment_id order by s.score desc, s.fragment_id), '{}'),
               coalesce(array_agg(s.score order by s.score desc, s.fragment_id), '{}')
          into lex_ids, lex_scores
        from scored s;
    end if;
    if dense_on then
        for m in select * from data._query_vectors(p_query_embeddings) loop
            select dense_ids || coalesce(array_agg(e.fragment_id), '{}'),
                   dense_sims || coalesce(array_agg(1.0::float8 - (e.embedding <=> m.query_vector)), '{}')
              into dense_ids, dense_sims
            from data.embeddings e
            where e.model_id = m.model_id and e.fragment_id = any (ids);
        end loop;
    end if;
    return query
    with lexical as (
        select l.id, l.score, l.n::int as rank
        from unnest(lex_ids, lex_scores) with ordinality as l(id, score, n)
    ), dense as (
        select d.id, d.sim, (row_number() over (order by d.sim desc, d.id))::int as rank
        from unnest(dense_ids, dense_sims) as d(id, sim)
    ), rows as materialized (
        select k.fragment_id, refs[k.ref_n] as ref, k.ref_n, k.ordinal, k.doc_id, k.doc_version, f.namespace, f.repo_id, f.kind, f.owner,
               f.heading_path, f.symbol, f.text, f.token_count, f.chunker_version, f.updated_at, f.negative,
               f.valid_from, f.valid_until, f.reading, em.name as model, em.name || '@' || em.generation as model_label,
               l.rank as lexical_rank, case when lexical_on then coalesce(l.score, 0.0) end as lexical_score,
               d.rank as dense_rank, d.sim as dense_similarity
        from unnest(ids, picked_refs, picked_ordinals, picked_docs, picked_versions)
             as k(fragment_id, ref_n, ordinal, doc_id, doc_version)
        join data.fragments f on f.fragment_id = k.fragment_id
        left join data.embedding_models em on em.namespace = f.namespace and em.status = 'active'
        left join lexical l on l.id = k.fragment_id
        left join dense d on d.id = k.fragment_id
    ), fused as (
        select fx.* from data._fuse(
            array(select r.fragment_id from rows r), array(select r.lexical_rank from rows r),
            array(select r.lexical_score from rows r), array(select r.dense_rank from rows r),
            array(select r.dense_similarity from rows r), array(select r.namespace from rows r),
            array(select r.model from rows r), lexical_on, dense_on, p_fusion, p_rrf_k) fx
        where has_query
    )
    select r.fragment_id, r.lexical_rank, r.lexical_score, r.dense_rank, r.dense_similarity,
           coalesce(fu.fused_score, 0.0), r.doc_id, r.doc_version, coalesce(d.path, ''),
           coalesce((select s.anchor from data.fragment_sources s
                     where s.fragment_id = r.fragment_id and s.doc_id = r.doc_id and s.doc_version = r.doc_version
                     order by s.ordinal limit 1), ''),
           r.repo_id, r.namespace, r.kind, r.owner, r.heading_path, r.symbol, r.text, r.token_count,
           r.chunker_version, r.model_label, r.updated_at, fu.lexical_norm, fu.dense_norm, fu.lexical_weight,
           fu.dense_weight, r.negative, null::bigint, null::int, null::float8, null::float8, null::timestamptz,
           r.valid_from, r.valid_until, r.reading, null::jsonb, r.ref, r.ordinal
    from rows r
    left join fused fu on fu.fragment_id = r.fragment_id
    left join data.documents d on d.doc_id = r.doc_id
    order by coalesce(fu.fused_score, 0.0) desc, r.lexical_rank nulls last, r.dense_rank nulls last,
             r.ref_n, r.ordinal;
end
$$;


ALTER FUNCTION api.context_candidates(p_org_id text, p_refs text[], p_query text, p_query_embeddings jsonb, p_fusion jsonb, p_rrf_k integer, p_include_retired boolean, p_repo_id text, p_persona_id text, p_session_id text, p_scoped boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION context_candidates(p_org_id text, p_refs text[], p_query text, p_query_embeddings jsonb, p_fusion jsonb, p_rrf_k integer, p_include_retired boolean, p_repo_id text, p_persona_id text, p_session_id text, p_scoped boolean); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.context_candidates(p_org_id text, p_refs text[], p_query text, p_query_embeddings jsonb, p_fusion jsonb, p_rrf_k integer, p_include_retired boolean, p_repo_id text, p_persona_id text, p_session_id text, p_scoped boolean) IS 'Members of the named Context versions the caller may read, as retrieval candidates scored from the bundles alone (no statistic of anything else), each with the reference that brought it.';


--
-- Name: context_create(text, text, text, text, text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.context_create(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_name text, p_description text DEFAULT ''::text) RETURNS TABLE(context_id bigint, ref text, org_id text, repo_id text, persona_id text, session_id text, name text, description text, created_by text, created_at timestamp with time zone, retired_at timestamp with time zone, latest_version integer, fragment_count integer, subscribed boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $_$
declare
    me record;
    id bigint;
begin
    select * into me from data._principal_or_raise();
    perform data._require_write(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform data._require_scope(p_org_id, p_repo_id, p_persona_id);
    if p_name is null or p_name !~ '^[A-Za-z0-9][A-Za-z0-9_.:/ -]{0,127}$' then
        raise exception 'a context name is 1 to 128 letters, digits, spaces and _.:/- (starting with a letter or digit)'
            using errcode = '22023';
    end if;
    if length(coalesce(p_description, '')) > 2000 then
        raise exception 'a context description is at most 2000 characters' using errcode = '22023';
    end if;
    insert into data.contexts (org_id, repo_id, persona_id, session_id, name, description, created_by)
    values (p_org_id, p_repo_id, p_persona_id, p_session_id, p_name, coalesce(p_description, ''), me.principal_id)
    returning data.contexts.context_id into id;
    return query select * from data._context_rows(array[id]);
end
$_$;


ALTER FUNCTION api.context_create(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_name text, p_description text) OWNER TO <migrator>;

--
-- Name: FUNCTION context_create(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_name text, p_description text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.context_create(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_name text, p_description text) IS 'Create a Context (a named bundle of fragments) in a scope; needs a write grant there.';


--
-- Name: context_get(bigint); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.context_get(p_context_id bigint) RETURNS TABLE(context_id bigint, ref text, org_id text, repo_id text, persona_id text, session_id text, name text, description text, created_by text, created_at timestamp with time zone, retired_at timestamp with time zone, latest_version integer, fragment_count integer, subscribed boolean)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    return query select * from data._context_rows(array[p_context_id]);
    if not found then
        raise exception 'unknown context: ctx_%', p_context_id using errcode = 'P0002';
    end if;
end
$$;


ALTER FUNCTION api.context_get(p_context_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION context_get(p_context_id bigint); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.context_get(p_context_id bigint) IS 'A Context the caller may read (its newest readable version and size), retired or not.';


--
-- Name: context_resolve(text[]); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.context_resolve(p_refs text[]) RETURNS TABLE(ordinal integer, ref text, context_id bigint, version integer, retired boolean, name text)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$ select r.ordinal, r.ref, r.context_id, r.version, r.retired, r.name from data._resolve_context_refs(p_refs) r $$;


ALTER FUNCTION api.context_resolve(p_refs text[]) OWNER TO <migrator>;

--
-- Name: FUNCTION context_resolve(p_refs text[]); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.context_resolve(p_refs text[]) IS 'Resolve ctx_<id>@<version> / ctx_<id>@latest references the caller may read (22023 malformed, P0002 unknown).';


--
-- Name: context_retire(bigint); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.context_retire(p_context_id bigint) RETURNS TABLE(context_id bigint, ref text, org_id text, repo_id text, persona_id text, session_id text, name text, description text, created_by text, created_at timestamp with time zone, retired_at timestamp with time zone, latest_version integer, fragment_count integer, subscribed boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    me record;
    ctx data.contexts;
begin
    select * into me from data._principal_or_raise();
    ctx := data._writable_context(p_context_id);
    update data.contexts c set retired_at = clock_timestamp(), retired_by = me.principal_id
    where c.context_id = ctx.context_id;
    return query select * from data._context_rows(array[ctx.context_id]);
end
$$;


ALTER FUNCTION api.context_retire(p_context_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION context_retire(p_context_id bigint); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.context_retire(p_context_id bigint) IS 'Retire a Context: out of listings and retrieval, still readable by reference (write grant on its scope).';


--
-- Name: context_subscribe(bigint, text, text, integer); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.context_subscribe(p_context_id bigint, p_subscriber_org_id text, p_subscriber_repo_id text DEFAULT NULL::text, p_version integer DEFAULT NULL::integer) RETURNS TABLE(subscription_id bigint, context_id bigint, ref text, org_id text, version integer, subscriber_org_id text, subscriber_repo_id text, created_by text, created_at timestamp with time zone, revoked_at timestamp with time zone, revoked_by text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $_$
declare
    me record;
    ctx data.contexts;
    id bigint;
begin
    select * into me from data._principal_or_raise();
    ctx := data._writable_context(p_context_id);
    -- Persona and session material stays in its scope (data._check_subscription says so
    -- on the table too): refused before anything about the subscriber is looked up.
    if ctx.persona_id is not null or ctx.session_id is not null then
        raise exception 'ctx_% is a % Context: it is read only inside its %, never subscribed', ctx.context_id,
            case when ctx.session_id is not null then 'session' else 'persona' end,
            case when ctx.session_id is not null then 'session' else 'persona' end
            using errcode = '42501',
            hint = 'Publish a Context of an org or repo scope; bundle the notes worth sharing into it once promoted.';
    end if;
    perform data._require_org(p_subscriber_org_id);
    if p_subscriber_repo_id is not null and p_subscriber_repo_id !~ '^[A-Za-z0-9][A-Za-z0-9_./-]{0,127}$' then
        raise exception 'malformed repo id: %', left(p_subscriber_repo_id, 64) using errcode = '22023';
    end if;
    if p_version is not null and not exists (select 1 from data.context_versions v
                                             where v.context_id = ctx.context_id and v.version = p_version) then
        raise exception 'unknown version: ctx_%@%', ctx.context_id, p_version using errcode = 'P0002';
    end if;
    insert into data.context_subscriptions (context_id, org_id, version, subscriber_org_id, subscriber_repo_id, created_by)
    values (ctx.context_id, ctx.org_id, p_version, p_subscriber_org_id, p_subscriber_repo_id, me.principal_id)
    returning data.context_subscriptions.subscription_id into id;
    return query
    select s.subscription_id, s.context_id, 'ctx_' || s.context_id || '@' || coalesce(s.version::text, 'latest'),
           s.org_id, s.version, s.subscriber_org_id, s.subscriber_repo_id, s.created_by, s.created_at,
           s.revoked_at, s.revoked_by
    from data.context_subscriptions s where s.subscription_id = id;
end
$_$;


ALTER FUNCTION api.context_subscribe(p_context_id bigint, p_subscriber_org_id text, p_subscriber_repo_id text, p_version integer) OWNER TO <migrator>;

--
-- Name: FUNCTION context_subscribe(p_context_id bigint, p_subscriber_org_id text, p_subscriber_repo_id text, p_version integer); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.context_subscribe(p_context_id bigint, p_subscriber_org_id text, p_subscriber_repo_id text, p_version integer) IS 'Publish a Context to another org or repo: a revocable grant on the bundle (pinned version, or the newest), never a copy. Needs a write grant on the Context''s scope.';


--
-- Name: context_subscriptions(bigint, boolean); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.context_subscriptions(p_context_id bigint DEFAULT NULL::bigint, p_include_revoked boolean DEFAULT false) RETURNS TABLE(subscription_id bigint, context_id bigint, ref text, org_id text, version integer, subscriber_org_id text, subscriber_repo_id text, created_by text, created_at timestamp with time zone, revoked_at timestamp with time zone, revoked_by text)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    -- The subscriber side does not learn who in the publisher's org made or ended it.
    select s.subscription_id, s.context_id, 'ctx_' || s.context_id || '@' || coalesce(s.version::text, 'latest'),
           s.org_id, s.version, s.subscriber_org_id, s.subscriber_repo_id,
           case when p.publisher then s.created_by end, s.created_at, s.revoked_at,
           case when p.publisher or starts_with(s.revoked_by, s.subscriber_org_id || '/') then s.revoked_by
                else split_part(s.revoked_by, '/', 1) end
    from data.context_subscriptions s
    cross join lateral (select exists (select 1 from data._readable_context_versions() rv
                                       where rv.context_id = s.context_id and not rv.via_subscription)
                               as publisher) p
    where (p_context_id is null or s.context_id = p_context_id)
      and (p_include_revoked or s.revoked_at is null)
    order by s.subscription_id
$$;


ALTER FUNCTION api.context_subscriptions(p_context_id bigint, p_include_revoked boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION context_subscriptions(p_context_id bigint, p_include_revoked boolean); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.context_subscriptions(p_context_id bigint, p_include_revoked boolean) IS 'Subscriptions the caller may see: of Contexts it publishes, and of its own subscriber scopes.';


--
-- Name: context_unsubscribe(bigint); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.context_unsubscribe(p_subscription_id bigint) RETURNS TABLE(subscription_id bigint, context_id bigint, ref text, org_id text, version integer, subscriber_org_id text, subscriber_repo_id text, created_by text, created_at timestamp with time zone, revoked_at timestamp with time zone, revoked_by text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    me record;
    sub data.context_subscriptions;
    ctx data.contexts;
    publisher boolean;
begin
    select * into me from data._principal_or_raise();
    select s.* into sub from data.context_subscriptions s where s.subscription_id = p_subscription_id;
    select c.* into ctx from data.contexts c where c.context_id = sub.context_id;
    publisher := sub.org_id = me.org_id
        and (ctx.repo_id is null or data.acl_org_wide() or ctx.repo_id = any (data.acl_repos()))
        and (ctx.persona_id is null or data.acl_org_wide() or ctx.persona_id = any (data.acl_personas()))
        and (ctx.session_id is null or ctx.session_id = any (data.acl_sessions()));
    if sub.subscription_id is null
       or not (publisher or (sub.subscriber_org_id = me.org_id
                             and (sub.subscriber_repo_id is null or data.acl_org_wide()
                                  or sub.subscriber_repo_id = any (data.acl_repos())))) then
        raise exception 'unknown subscription: %', p_subscription_id using errcode = 'P0002';
    end if;
    if publisher then
        perform data._require_write(ctx.org_id, ctx.repo_id, ctx.persona_id, ctx.session_id);
    else
        perform data._require_write(sub.subscriber_org_id, sub.subscriber_repo_id, null, null);
    end if;
    if sub.revoked_at is not null then
        raise exception 'subscription % was revoked already', p_subscription_id using errcode = '55000';
    end if;
    update data.context_subscriptions s set revoked_at = clock_timestamp(), revoked_by = me.org_id || '/' || me.principal_id
    where s.subscription_id = sub.subscription_id;
    return query
    select s.subscription_id, s.context_id, 'ctx_' || s.context_id || '@' || coalesce(s.version::text, 'latest'),
           s.org_id, s.version, s.subscriber_org_id, s.subscriber_repo_id, s.created_by, s.created_at,
           s.revoked_at, s.revoked_by
    from data.context_subscriptions s where s.subscription_id = sub.subscription_id;
end
$$;


ALTER FUNCTION api.context_unsubscribe(p_subscription_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION context_unsubscribe(p_subscription_id bigint); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.context_unsubscribe(p_subscription_id bigint) IS 'Revoke a subscription (its publisher, or a writer of the subscriber scope); the row stays for audit.';


--
-- Name: context_versions(bigint); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.context_versions(p_context_id bigint) RETURNS TABLE(context_id bigint, ref text, version integer, fragment_count integer, built_from jsonb, note text, created_by text, created_at timestamp with time zone)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    return query
    select v.context_id, 'ctx_' || v.context_id || '@' || v.version, v.version, v.fragment_count,
           case when rv.shared then '{}'::jsonb else v.built_from end, v.note,
           case when rv.shared then null else v.created_by end, v.created_at
    from data.context_versions v
    join (select x.version, bool_and(x.via_subscription) as shared from data._readable_context_versions() x
          where x.context_id = p_context_id group by x.version) rv on rv.version = v.version
    where v.context_id = p_context_id
    order by v.version desc;
    if not found and not exists (select 1 from data.contexts c where c.context_id = p_context_id) then
        raise exception 'unknown context: ctx_%', p_context_id using errcode = 'P0002';
    end if;
end
$$;


ALTER FUNCTION api.context_versions(p_context_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION context_versions(p_context_id bigint); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.context_versions(p_context_id bigint) IS 'The versions of a Context the caller may read, newest first.';


--
-- Name: contexts_list(text, text, text, text, boolean); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.contexts_list(p_org_id text, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_include_retired boolean DEFAULT false) RETURNS TABLE(context_id bigint, ref text, org_id text, repo_id text, persona_id text, session_id text, name text, description text, created_by text, created_at timestamp with time zone, retired_at timestamp with time zone, latest_version integer, fragment_count integer, subscribed boolean)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform data._require_org(p_org_id);
    perform data._require_scope(p_org_id, p_repo_id, p_persona_id);
    return query
    select r.* from data._context_rows(array(
        select c.context_id from data.contexts c
        where (p_include_retired or c.retired_at is null)
          and ((c.org_id = p_org_id
                and data._in_scope(c.repo_id, c.persona_id, c.session_id, p_repo_id, p_persona_id, p_session_id)
                and (c.repo_id is null or data.acl_org_wide() or c.repo_id = any (data.acl_repos()))
                and (c.persona_id is null or data.acl_org_wide() or c.persona_id = any (data.acl_personas()))
                and (c.session_id is null or c.session_id = any (data.acl_sessions())))
               or c.context_id in (select rv.context_id
                                   from data._context_versions(true, p_repo_id, p_persona_id, p_session_id) rv
                                   where rv.via_subscription)))) r
    order by r.org_id = p_org_id desc, r.name, r.context_id;
end
$$;


ALTER FUNCTION api.contexts_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_retired boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION contexts_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_retired boolean); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.contexts_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_retired boolean) IS 'Contexts a request in this scope may name: its org''s within the scope, and those subscribed to; retired ones on request.';


--
-- Name: create_analyst(text, text, text, text, text[], text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.create_analyst(p_org_id text, p_principal_id text, p_login text, p_verifier text, p_grants text[] DEFAULT '{}'::text[], p_display_name text DEFAULT ''::text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    g text;
    kind text;
    created boolean := false;
begin
    perform data._require_org(p_org_id);
    if exists (select 1 from data.principals p where p.org_id = p_org_id and p.principal_id = p_principal_id) then
        raise exception 'principal % already exists in org %', p_principal_id, p_org_id using errcode = '23505',
            hint = 'Choose another name, or map a login to it with `contexts principal create ORG NAME --db-role LOGIN`.';
    end if;
    perform data._valid_login(p_login);
    if exists (select 1 from pg_roles r where r.rolname = p_login) then
        perform data._adopt_login(p_login);
    else
        perform api.create_login(p_login, p_verifier);
        created := true;
    end if;
    perform api.create_principal(p_org_id, p_principal_id, 'human', coalesce(p_display_name, ''), p_login::name);
    foreach g in array coalesce(p_grants, '{}') loop
        kind := split_part(g, ':', 1);
        if kind not in ('org', 'audit', 'repo', 'persona', 'session')
           or (kind in ('org', 'audit') and g <> kind)
           or (kind in ('repo', 'persona', 'session') and length(g) <= length(kind) + 1) then
            raise exception 'invalid grant: % (org, audit, repo:ID, persona:ID or session:ID)', g using errcode = '22023';
        end if;
        perform api.grant_scope(p_org_id, p_principal_id, kind, nullif(substr(g, length(kind) + 2), ''), false);
    end loop;
    return created;
end
$$;


ALTER FUNCTION api.create_analyst(p_org_id text, p_principal_id text, p_login text, p_verifier text, p_grants text[], p_display_name text) OWNER TO <migrator>;

--
-- Name: FUNCTION create_analyst(p_org_id text, p_principal_id text, p_login text, p_verifier text, p_grants text[], p_display_name text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.create_analyst(p_org_id text, p_principal_id text, p_login text, p_verifier text, p_grants text[], p_display_name text) IS 'Create (or adopt) a login, its human principal and its read grants in one step.';


--
-- Name: create_api_key(text, text, text, bytea, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.create_api_key(p_org_id text, p_principal_id text, p_key_id text, p_key_hash bytea, p_label text DEFAULT ''::text) RETURNS timestamp with time zone
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    created timestamptz;
begin
    perform data._require_principal(p_org_id, p_principal_id);
    insert into data.api_keys (key_id, org_id, principal_id, key_hash, label)
    values (p_key_id, p_org_id, p_principal_id, p_key_hash, coalesce(p_label, ''))
    returning api_keys.created_at into created;
    return created;
exception when check_violation then
    raise exception 'invalid API key: %', sqlerrm using errcode = '22023';
end
$$;


ALTER FUNCTION api.create_api_key(p_org_id text, p_principal_id text, p_key_id text, p_key_hash bytea, p_label text) OWNER TO <migrator>;

--
-- Name: FUNCTION create_api_key(p_org_id text, p_principal_id text, p_key_id text, p_key_hash bytea, p_label text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.create_api_key(p_org_id text, p_principal_id text, p_key_id text, p_key_hash bytea, p_label text) IS 'Store a new key (its SHA-256) for a principal.';


--
-- Name: create_login(text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.create_login(p_login text, p_verifier text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    perform data._valid_login(p_login);
    perform data._require_scram(p_verifier);
    if exists (select 1 from pg_roles r where r.rolname = p_login) then
        raise exception 'login % already exists', p_login using errcode = '42710';
    end if;
    begin
        -- Exactly an analyst: no attribute beyond LOGIN, one group role.
        execute format('create role %I login nosuperuser nocreatedb nocreaterole noreplication nobypassrls '
                       'password %L in role contexts_analyst', p_login, p_verifier);
    exception when insufficient_privilege then
        raise exception 'role % may not create logins', current_user using errcode = '42501',
            detail = 'Creating a login needs CREATEROLE and ADMIN OPTION on contexts_analyst (or a superuser).',
            hint = format('A DBA runs: create role %I login in role contexts_analyst; then sets its password '
                          '(psql: \password %I), and the same contexts command maps the existing login.',
                          p_login, p_login);
    end;
    execute format('comment on role %I is %L', p_login, 'Contexts analyst login (contexts analyst create).');
end
$$;


ALTER FUNCTION api.create_login(p_login text, p_verifier text) OWNER TO <migrator>;

--
-- Name: FUNCTION create_login(p_login text, p_verifier text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.create_login(p_login text, p_verifier text) IS 'Create an analyst login (member of contexts_analyst only) from a SCRAM-SHA-256 verifier.';


--
-- Name: create_org(text, text, interval); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.create_org(p_org_id text, p_display_name text DEFAULT ''::text, p_session_ttl interval DEFAULT NULL::interval) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    insert into data.orgs (org_id, display_name, session_ttl)
    values (p_org_id, coalesce(p_display_name, ''), coalesce(p_session_ttl, interval '24 hours'))
    on conflict (org_id) do update
        set display_name = coalesce(nullif(excluded.display_name, ''), orgs.display_name),
            session_ttl = coalesce(p_session_ttl, orgs.session_ttl);
    perform data._create_tenant_partitions(p_org_id);
    return p_org_id;
exception when check_violation then
    raise exception 'invalid org: %', sqlerrm using errcode = '22023';
end
$$;


ALTER FUNCTION api.create_org(p_org_id text, p_display_name text, p_session_ttl interval) OWNER TO <migrator>;

--
-- Name: FUNCTION create_org(p_org_id text, p_display_name text, p_session_ttl interval); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.create_org(p_org_id text, p_display_name text, p_session_ttl interval) IS 'Create (or rename) a tenant org and its partitions.';


--
-- Name: create_principal(text, text, text, text, name); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.create_principal(p_org_id text, p_principal_id text, p_kind text DEFAULT 'agent'::text, p_display_name text DEFAULT ''::text, p_db_role name DEFAULT NULL::name) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    perform data._require_org(p_org_id);
    if p_db_role is not null and not exists (select 1 from pg_roles r where r.rolname = p_db_role) then
        raise exception 'no such login role: %', p_db_role using errcode = '22023',
            hint = '`contexts principal create ORG NAME --db-role LOGIN` creates it.';
    end if;
    -- A role row-level security does not bind would read every org whatever it maps to.
    perform data._require_rls_login(p_db_role) where p_db_role is not null;
    if exists (select 1 from data.principals p
               where p.db_role = p_db_role and (p.org_id, p.principal_id) <> (p_org_id, p_principal_id)) then
        raise exception 'login % is already mapped to principal %', p_db_role,
            (select p.org_id || '/' || p.principal_id from data.principals p where p.db_role = p_db_role)
            using errcode = '23505';
    end if;
    insert into data.principals (org_id, principal_id, kind, display_name, db_role)
    values (p_org_id, p_principal_id, coalesce(p_kind, 'agent'), coalesce(p_display_name, ''), p_db_role)
    on conflict (org_id, principal_id) do update
        set kind = excluded.kind, display_name = coalesce(nullif(excluded.display_name, ''), principals.display_name),
            db_role = coalesce(excluded.db_role, principals.db_role), disabled_at = null;
exception when check_violation then
    raise exception 'invalid principal: %', sqlerrm using errcode = '22023';
end
$$;


ALTER FUNCTION api.create_principal(p_org_id text, p_principal_id text, p_kind text, p_display_name text, p_db_role name) OWNER TO <migrator>;

--
-- Name: FUNCTION create_principal(p_org_id text, p_principal_id text, p_kind text, p_display_name text, p_db_role name); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.create_principal(p_org_id text, p_principal_id text, p_kind text, p_display_name text, p_db_role name) IS 'Create or update a principal (agent, human or service), optionally mapped to a login role.';


--
-- Name: delete_document(bigint); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.delete_document(p_doc_id bigint) RETURNS TABLE(doc_id bigint, org_id text, path text, version integer, fragments_retired integer, rehome jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    me record;
    doc data.documents;
    retired int;
    detached jsonb;
begin
    select * into me from data._principal_or_raise();
    -- The scope_read policy of data.documents, restated (a definer reads past it).
    select d.* into doc from data.documents d
    where d.doc_id = p_doc_id and d.org_id = me.org_id and d.deleted_at is null
      and (d.repo_id is null or data.acl_org_wide() or d.repo_id = any(data.acl_repos()))
      and (d.persona_id is null or data.acl_org_wide() or d.persona_id = any(data.acl_personas()))
      and (d.session_id is null or d.session_id = any(data.acl_sessions()));
    if doc.doc_id is null then
        raise exception 'unknown document: %', p_doc_id using errcode = 'P0002';
    end if;
    perform data._require_write(doc.org_id, doc.repo_id, doc.persona_id, doc.session_id);
    perform pg_advisory_xact_lock(hashtextextended('contexts.ingest:' || doc.org_id, 0));
    select * into doc from data.documents d where d.doc_id = p_doc_id for update;
    if doc.deleted_at is not null then  -- a concurrent delete got here first
        raise exception 'unknown document: %', p_doc_id using errcode = 'P0002';
    end if;
    select count(distinct s.fragment_id)::int into retired from data.fragment_sources s
    where s.doc_id = doc.doc_id and s.retired_at is null;
    detached := data._retire_sources(doc.doc_id, doc.current_version + 1);
    update data.documents d set deleted_at = now(), deleted_by = me.principal_id, updated_at = now()
    where d.doc_id = doc.doc_id;
    -- What it superseded is current again; its fragments cited elsewhere keep the others' windows.
    perform data._refresh_validity(doc.org_id, array[doc.doc_id]);
    return query select doc.doc_id, doc.org_id, doc.path, doc.current_version, retired, detached;
end
$$;


ALTER FUNCTION api.delete_document(p_doc_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION delete_document(p_doc_id bigint); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.delete_document(p_doc_id bigint) IS 'Delete a document the bound principal may write: its fragments leave retrieval and BM25 at once; versions, sources and traces stay; returns near-duplicate pointers to re-home.';


--
-- Name: disable_principal(text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.disable_principal(p_org_id text, p_principal_id text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    login text;
begin
    perform data._require_principal(p_org_id, p_principal_id);
    update data.principals p set disabled_at = coalesce(p.disabled_at, now())
    where p.org_id = p_org_id and p.principal_id = p_principal_id
    returning p.db_role into login;
    return login;
end
$$;


ALTER FUNCTION api.disable_principal(p_org_id text, p_principal_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION disable_principal(p_org_id text, p_principal_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.disable_principal(p_org_id text, p_principal_id text) IS 'Disable a principal for good (rows, grants and traces are kept).';


--
-- Name: drop_model_generation(integer, boolean); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.drop_model_generation(p_model_id integer, p_force boolean DEFAULT false) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
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


ALTER FUNCTION api.drop_model_generation(p_model_id integer, p_force boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION drop_model_generation(p_model_id integer, p_force boolean); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.drop_model_generation(p_model_id integer, p_force boolean) IS 'Delete a retired (window ended) or shadow generation''s vectors and index; the row stays for traces.';


--
-- Name: drop_retired_models(); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.drop_retired_models() RETURNS TABLE(model_id integer, namespace text, name text, generation integer, vectors bigint)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    m data.embedding_models;
begin
    -- Locked: a rollback promoting one of these back waits, or is waited for and then
    -- not selected (never the serving generation).
    for m in select * from data.embedding_models em
             where em.status = 'retired' and em.dropped_at is null and em.window_ends_at <= now()
             order by em.model_id for update loop
        model_id := m.model_id; namespace := m.namespace; name := m.name; generation := m.generation;
        vectors := api.drop_model_generation(m.model_id);
        return next;
    end loop;
end
$$;


ALTER FUNCTION api.drop_retired_models() OWNER TO <migrator>;

--
-- Name: FUNCTION drop_retired_models(); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.drop_retired_models() IS 'Drop the vectors and index of every retired generation whose window has ended.';


--
-- Name: ensure_scope(text, text, text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.ensure_scope(p_org_id text, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    perform data._require_org(p_org_id);
    if p_repo_id is not null then
        insert into data.repos (org_id, repo_id) values (p_org_id, p_repo_id) on conflict do nothing;
    end if;
    if p_persona_id is not null then
        insert into data.personas (org_id, persona_id) values (p_org_id, p_persona_id) on conflict do nothing;
    end if;
    if p_session_id is not null then
        -- on conflict: concurrent first writes into one new session all succeed.
        insert into data.sessions (org_id, session_id, expires_at)
        select p_org_id, p_session_id, now() + o.session_ttl from data.orgs o where o.org_id = p_org_id
        on conflict (org_id, session_id) do nothing;
    end if;
exception when check_violation then
    raise exception 'invalid scope identifier: %', sqlerrm using errcode = '22023';
end
$$;


ALTER FUNCTION api.ensure_scope(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION ensure_scope(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.ensure_scope(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) IS 'Create missing repo/persona/session rows of an existing org.';


--
-- Name: fragment_links(bigint); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.fragment_links(p_fragment_id bigint) RETURNS TABLE(direction text, link_type text, target text, resolved boolean, fragment_id bigint, doc_id bigint, path text, anchor text)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    perform 1 from data.fragments f where f.fragment_id = p_fragment_id;
    if not found then
        raise exception 'unknown fragment: %', p_fragment_id using errcode = 'P0002';
    end if;
    return query
    select x.direction, x.link_type, x.target, x.resolved, x.fragment_id, x.doc_id, x.path, x.anchor
    from (
        select distinct on (l.link_type, l.target_key, coalesce(l.target_name, ''), coalesce(l.target_anchor, ''))
               'out'::text as direction, l.link_type, l.target, l.target_fragment_id is not null as resolved,
               l.target_fragment_id as fragment_id, l.target_doc_id as doc_id, d.path,
               (select s.anchor from data.fragment_sources s
                where s.fragment_id = l.target_fragment_id and s.doc_id = l.target_doc_id and s.retired_at is null
                order by s.doc_version desc, s.ordinal limit 1) as anchor,
               l.link_id
        from data.fragment_links l
        left join data.documents d on d.doc_id = l.target_doc_id and l.target_fragment_id is not null
        where l.fragment_id = p_fragment_id
        order by l.link_type, l.target_key, coalesce(l.target_name, ''), coalesce(l.target_anchor, ''), l.link_id
    ) x
    union all
    select y.direction, y.link_type, y.target, true, y.fragment_id, y.doc_id, y.path, y.anchor
    from (
        select distinct on (l.fragment_id, l.link_type)
               'in'::text as direction, l.link_type, l.target, l.fragment_id, l.doc_id, d.path,
               (select s.anchor from data.fragment_sources s
                where s.fragment_id = l.fragment_id and s.doc_id = l.doc_id and s.retired_at is null
                order by s.doc_version desc, s.ordinal limit 1) as anchor,
               l.link_id
        from data.fragment_links l
        join data.fragments f on f.fragment_id = l.fragment_id and f.active
        join data.documents d on d.doc_id = l.doc_id and d.deleted_at is null
        where l.target_fragment_id = p_fragment_id and l.fragment_id <> p_fragment_id
        order by l.fragment_id, l.link_type, l.link_id
    ) y;
end
$$;


ALTER FUNCTION api.fragment_links(p_fragment_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION fragment_links(p_fragment_id bigint); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.fragment_links(p_fragment_id bigint) IS 'The references a fragment makes and those made to it, as the caller may see them (GET /fragments/{id}/links).';


--
-- Name: get_document(bigint, integer, integer, integer); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.get_document(p_doc_id bigint, p_version integer DEFAULT NULL::integer, p_offset integer DEFAULT 0, p_max_chars integer DEFAULT NULL::integer) RETURNS TABLE(doc_id bigint, org_id text, repo_id text, persona_id text, session_id text, path text, kind text, version integer, current_version integer, language text, author text, owner text, source_ts timestamp with time zone, metadata jsonb, content_hash text, content text, content_chars integer, content_offset integer, created_at timestamp with time zone, updated_at timestamp with time zone, fragments jsonb, versions jsonb)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    d data.documents;
    v data.document_versions;
begin
    if p_offset is null or p_offset < 0 or (p_max_chars is not null and p_max_chars < 1) then
        raise exception 'offset must be >= 0 and max_chars >= 1' using errcode = '22023';
    end if;
    select * into d from data.documents x where x.doc_id = p_doc_id and x.deleted_at is null;
    if not found then
        raise exception 'unknown document: %', p_doc_id using errcode = 'P0002';
    end if;
    select * into v from data.document_versions x
    where x.doc_id = p_doc_id and x.version = coalesce(p_version, d.current_version);
    if not found then
        raise exception 'document % has no version %', p_doc_id, p_version using errcode = 'P0002';
    end if;
    return query
    select d.doc_id, d.org_id, d.repo_id, d.persona_id, d.session_id, d.path, d.kind,
           v.version, d.current_version, v.language, v.author, d.owner, v.source_ts, v.metadata,
           v.content_hash,
           -- p_offset + 1 cannot overflow past the end test; least() keeps start + count in int.
           case when p_offset >= length(v.content) then ''
                when p_max_chars is null then substr(v.content, p_offset + 1)
                else substr(v.content, p_offset + 1, least(p_max_chars, length(v.content) - p_offset)) end,
           length(v.content), p_offset, v.created_at, d.updated_at,
           coalesce((select jsonb_agg(jsonb_build_object(
                        'fragment_id', s.fragment_id, 'anchor', s.anchor, 'start_line', s.start_line,
                        'end_line', s.end_line, 'live', s.retired_at is null) order by s.ordinal)
                     from data.fragment_sources s
                     where s.doc_id = d.doc_id and s.doc_version = v.version), '[]'::jsonb),
           (select jsonb_agg(jsonb_build_object(
                       'version', x.version, 'content_hash', x.content_hash, 'chars', length(x.content),
                       'author', x.author, 'source_ts', x.source_ts, 'created_at', x.created_at,
                       'current', x.version = d.current_version) order by x.version)
            from data.document_versions x where x.doc_id = d.doc_id);
end
$$;


ALTER FUNCTION api.get_document(p_doc_id bigint, p_version integer, p_offset integer, p_max_chars integer) OWNER TO <migrator>;

--
-- Name: FUNCTION get_document(p_doc_id bigint, p_version integer, p_offset integer, p_max_chars integer); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.get_document(p_doc_id bigint, p_version integer, p_offset integer, p_max_chars integer) IS 'One version of a readable document (current by default), its text or a slice of it, its fragments, and every version it has had.';


--
-- Name: get_fragment(bigint); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.get_fragment(p_fragment_id bigint) RETURNS TABLE(fragment_id bigint, org_id text, repo_id text, persona_id text, session_id text, doc_id bigint, doc_version integer, namespace text, kind text, owner text, heading_path text[], symbol text, text text, token_count integer, chunker_version text, simhash bigint, active boolean, created_at timestamp with time zone, updated_at timestamp with time zone, embedding_model text, sources jsonb)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    return query
    select f.fragment_id, f.org_id, f.repo_id, f.persona_id, f.session_id, f.doc_id, f.doc_version,
           f.namespace, f.kind, f.owner, f.heading_path, f.symbol, f.text, f.token_count,
           f.chunker_version, f.simhash, f.active, f.created_at, f.updated_at,
           (select em.name || '@' || em.generation from data.embeddings e
              join data.embedding_models em on em.model_id = e.model_id
             where e.fragment_id = f.fragment_id order by em.generation desc limit 1),
           coalesce((select jsonb_agg(jsonb_build_object(
                        'doc_id', s.doc_id, 'version', s.doc_version, 'path', d.path,
                        'anchor', s.anchor, 'start_line', s.start_line, 'end_line', s.end_line,
                        'live', s.retired_at is null, 'exact', s.content_hash = f.content_hash)
                        order by s.retired_at is null desc, s.created_at desc)
                     from data.fragment_sources s join data.documents d on d.doc_id = s.doc_id
                     where s.fragment_id = f.fragment_id), '[]'::jsonb)
    from data.fragments f
    where f.fragment_id = p_fragment_id;
    if not found then
        raise exception 'unknown fragment: %', p_fragment_id using errcode = 'P0002';
    end if;
end
$$;


ALTER FUNCTION api.get_fragment(p_fragment_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION get_fragment(p_fragment_id bigint); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.get_fragment(p_fragment_id bigint) IS 'A fragment, its provenance and every source pointer.';


--
-- Name: get_trace(uuid); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.get_trace(p_trace_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    result jsonb;
begin
    select to_jsonb(v) into result from api.retrieval_traces v where v.trace_id = p_trace_id;
    if result is null then
        raise exception 'unknown trace: %', p_trace_id using errcode = 'P0002';
    end if;
    return result;
end
$$;


ALTER FUNCTION api.get_trace(p_trace_id uuid) OWNER TO <migrator>;

--
-- Name: FUNCTION get_trace(p_trace_id uuid); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.get_trace(p_trace_id uuid) IS 'A retrieval trace as the caller may see it: request, pipeline versions, every candidate''s ranks and scores; what its grants do not cover is redacted and listed.';


--
-- Name: grant_scope(text, text, text, text, boolean); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.grant_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text DEFAULT NULL::text, p_can_write boolean DEFAULT false) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    target text := data._grant_target(p_org_id, p_scope_kind, p_scope_id);
begin
    perform data._require_principal(p_org_id, p_principal_id);
    if target is null then
        raise exception 'a % grant names the %', p_scope_kind, p_scope_kind using errcode = '22023';
    end if;
    perform api.ensure_scope(p_org_id,
        case when p_scope_kind = 'repo' then target end,
        case when p_scope_kind = 'persona' then target end,
        case when p_scope_kind = 'session' then target end);
    insert into data.grants (org_id, principal_id, scope_kind, scope_id, can_write)
    values (p_org_id, p_principal_id, p_scope_kind, target, coalesce(p_can_write, false))
    on conflict (org_id, principal_id, scope_kind, scope_id) do update set can_write = excluded.can_write;
exception when check_violation then
    raise exception 'invalid grant: %', sqlerrm using errcode = '22023';
end
$$;


ALTER FUNCTION api.grant_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text, p_can_write boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION grant_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text, p_can_write boolean); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.grant_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text, p_can_write boolean) IS 'Grant a principal read (and optionally write) on an org, repo, persona or session, or audit on the org.';


--
-- Name: idempotent_record(text, text, integer, jsonb); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.idempotent_record(p_key text, p_request_hash text, p_status integer, p_response jsonb) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    me record;
    stored int;
begin
    select * into me from data._principal_or_raise();
    delete from data.idempotent_writes w
    where w.org_id = me.org_id and w.created_at <= now() - interval '24 hours';
    insert into data.idempotent_writes (org_id, principal_id, idempotency_key, request_hash, status, response)
    values (me.org_id, me.principal_id, p_key, p_request_hash, p_status, p_response)
    on conflict do nothing;
    get diagnostics stored = row_count;
    return stored = 1;
exception when check_violation then
    raise exception 'invalid idempotency key or response: %', sqlerrm using errcode = '22023';
end
$$;


ALTER FUNCTION api.idempotent_record(p_key text, p_request_hash text, p_status integer, p_response jsonb) OWNER TO <migrator>;

--
-- Name: FUNCTION idempotent_record(p_key text, p_request_hash text, p_status integer, p_response jsonb); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.idempotent_record(p_key text, p_request_hash text, p_status integer, p_response jsonb) IS 'Remember a write''s response under its Idempotency-Key in the write''s transaction; false when the key is taken (a concurrent request with it committed first).';


--
-- Name: idempotent_response(text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.idempotent_response(p_key text) RETURNS TABLE(request_hash text, status integer, response jsonb, created_at timestamp with time zone)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    me record;
begin
    select * into me from data._principal_or_raise();
    return query
    select w.request_hash, w.status, w.response, w.created_at
    from data.idempotent_writes w
    where w.org_id = me.org_id and w.principal_id = me.principal_id and w.idempotency_key = p_key
      and w.created_at > now() - interval '24 hours';
end
$$;


ALTER FUNCTION api.idempotent_response(p_key text) OWNER TO <migrator>;

--
-- Name: FUNCTION idempotent_response(p_key text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.idempotent_response(p_key text) IS 'The response an earlier write of the bound principal with this Idempotency-Key got (within 24 hours), and the hash of its request.';


--
-- Name: lexical_document(text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.lexical_document(p_heading text, p_body text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    select setweight(api.lexical_tsvector(p_heading), 'A') || api.lexical_tsvector(p_body)
$$;


ALTER FUNCTION api.lexical_document(p_heading text, p_body text) OWNER TO <migrator>;

--
-- Name: FUNCTION lexical_document(p_heading text, p_body text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.lexical_document(p_heading text, p_body text) IS 'tsvector of a fragment: heading (weight A) and body.';


--
-- Name: lexical_tsvector(text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.lexical_tsvector(p_text text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $_$
    select to_tsvector('english'::regconfig, regexp_replace(coalesce(p_text, ''), '[.:/\\@#$=<>]+', ' ', 'g'))
$_$;


ALTER FUNCTION api.lexical_tsvector(p_text text) OWNER TO <migrator>;

--
-- Name: FUNCTION lexical_tsvector(p_text text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.lexical_tsvector(p_text text) IS 'Terms of a text for BM25: english configuration, code separators split.';


--
-- Name: linked_fragments(text, bigint[], text, text, text, timestamp with time zone, boolean); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.linked_fragments(p_org_id text, p_fragment_ids bigint[], p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_as_of timestamp with time zone DEFAULT NULL::timestamp with time zone, p_include_superseded boolean DEFAULT false) RETURNS TABLE(linked_from bigint, link_type text, fragment_id bigint, lexical_rank integer, lexical_score double precision, dense_rank integer, dense_similarity double precision, fused_score double precision, doc_id bigint, doc_version integer, path text, anchor text, repo_id text, namespace text, kind text, owner text, heading_path text[], symbol text, text text, token_count integer, chunker_version text, embedding_model text, updated_at timestamp with time zone, negative boolean, valid_from timestamp with time zone, valid_until timestamp with time zone)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    valid_at timestamptz := case when p_include_superseded then null else coalesce(p_as_of, statement_timestamp()) end;
begin
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform data._require_org(p_org_id);
    if coalesce(cardinality(p_fragment_ids), 0) > 1000 then
        raise exception 'at most 1000 fragments to expand' using errcode = '22023';
    end if;
    return query
    with hops as (
        select distinct on (l.target_fragment_id) c.id as citing, l.link_type, l.target_fragment_id as target, c.ord,
               l.link_id
        from unnest(p_fragment_ids) with ordinality as c(id, ord)
        join data.fragment_links l on l.fragment_id = c.id and l.org_id = p_org_id
        where l.target_fragment_id is not null and not l.target_fragment_id = any (p_fragment_ids)
        order by l.target_fragment_id, c.ord, l.link_id
    )
    select h.citing, h.link_type, f.fragment_id, null::int, null::float8, null::int, null::float8, 0.0::float8,
           src.doc_id, src.doc_version, src.path, src.anchor, f.repo_id, f.namespace, f.kind, f.owner,
           f.heading_path, f.symbol, f.text, f.token_count, f.chunker_version,
           (select em.name || '@' || em.generation from data._serving_models() em
            where em.namespace = f.namespace),
           f.updated_at, f.negative, f.valid_from, f.valid_until
    from hops h
    join data.fragments f on f.fragment_id = h.target and f.org_id = p_org_id and f.active
    cross join lateral (
        select s.doc_id, s.doc_version, d.path, s.anchor
        from data.fragment_sources s join data.documents d on d.doc_id = s.doc_id
        where s.fragment_id = f.fragment_id and s.retired_at is null
        order by s.content_hash = f.content_hash desc, s.created_at desc, s.doc_id, s.ordinal
        limit 1
    ) src
    where data._in_scope(f.repo_id, f.persona_id, f.session_id, p_repo_id, p_persona_id, p_session_id)
      and (valid_at is null
           or ((f.valid_from is null or f.valid_from <= valid_at) and (f.valid_until is null or f.valid_until > valid_at)))
    order by h.ord, h.link_id;
end
$$;


ALTER FUNCTION api.linked_fragments(p_org_id text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_as_of timestamp with time zone, p_include_superseded boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION linked_fragments(p_org_id text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_as_of timestamp with time zone, p_include_superseded boolean); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.linked_fragments(p_org_id text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_as_of timestamp with time zone, p_include_superseded boolean) IS 'The fragments these cite, one hop, within the requested scope and current (a retrieval''s expand_links).';


--
-- Name: list_analysts(text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.list_analysts(p_org_id text DEFAULT NULL::text) RETURNS TABLE(org_id text, principal_id text, login text, can_login boolean, member_of text[], disabled_at timestamp with time zone, grants text[])
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    select p.org_id, p.principal_id, p.db_role::text, coalesce(r.rolcanlogin, false),
           array(select grp.rolname::text from pg_auth_members m join pg_roles grp on grp.oid = m.roleid
                 where m.member = r.oid order by 1),
           p.disabled_at,
           array(select case when g.scope_kind in ('org', 'audit') then g.scope_kind
                             else g.scope_kind || ':' || g.scope_id end
                 from data.grants g
                 where g.org_id = p.org_id and g.principal_id = p.principal_id
                 order by g.scope_kind, g.scope_id)
    from data.principals p left join pg_roles r on r.rolname = p.db_role
    where p.db_role is not null and (p_org_id is null or p.org_id = p_org_id)
    order by p.org_id, p.principal_id
$$;


ALTER FUNCTION api.list_analysts(p_org_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION list_analysts(p_org_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.list_analysts(p_org_id text) IS 'Principals mapped to a login: the login''s state, groups and the principal''s grants.';


--
-- Name: list_api_keys(text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.list_api_keys(p_org_id text) RETURNS TABLE(key_id text, principal_id text, label text, created_at timestamp with time zone, last_used_at timestamp with time zone, revoked_at timestamp with time zone)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    select k.key_id, k.principal_id, k.label, k.created_at, k.last_used_at, k.revoked_at
    from data.api_keys k where k.org_id = p_org_id order by k.created_at, k.key_id
$$;


ALTER FUNCTION api.list_api_keys(p_org_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION list_api_keys(p_org_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.list_api_keys(p_org_id text) IS 'Keys of an org (never their hashes).';


--
-- Name: list_documents(text, text, text, text, text, integer, bigint, text, text, timestamp with time zone); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.list_documents(p_org_id text, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_path_prefix text DEFAULT NULL::text, p_limit integer DEFAULT 50, p_after bigint DEFAULT NULL::bigint, p_kind text DEFAULT NULL::text, p_owner text DEFAULT NULL::text, p_updated_since timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(doc_id bigint, org_id text, repo_id text, persona_id text, session_id text, path text, kind text, version integer, language text, author text, owner text, source_ts timestamp with time zone, fragments integer, created_at timestamp with time zone, updated_at timestamp with time zone)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform data._require_org(p_org_id);
    perform data._require_scope(p_org_id, p_repo_id, p_persona_id);
    if p_limit is null or p_limit not between 1 and 1000 then
        raise exception 'limit must be between 1 and 1000' using errcode = '22023';
    end if;
    return query
    select d.doc_id, d.org_id, d.repo_id, d.persona_id, d.session_id, d.path, d.kind,
           d.current_version, v.language, v.author, d.owner, v.source_ts,
           (select count(*)::int from data.fragment_sources s
             where s.doc_id = d.doc_id and s.doc_version = d.current_version and s.retired_at is null),
           d.created_at, d.updated_at
    from data.documents d
    join data.document_versions v on v.doc_id = d.doc_id and v.version = d.current_version
    where d.org_id = p_org_id
      and d.deleted_at is null
      and data._in_scope(d.repo_id, d.persona_id, d.session_id, p_repo_id, p_persona_id, p_session_id)
      and (p_path_prefix is null or starts_with(d.path, p_path_prefix))
      and (p_kind is null or d.kind = p_kind)
      and (p_owner is null or d.owner = p_owner)
      and (p_updated_since is null or d.updated_at >= p_updated_since)
      and (p_after is null or d.doc_id > p_after)
    order by d.doc_id
    limit p_limit;
end
$$;


ALTER FUNCTION api.list_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path_prefix text, p_limit integer, p_after bigint, p_kind text, p_owner text, p_updated_since timestamp with time zone) OWNER TO <migrator>;

--
-- Name: FUNCTION list_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path_prefix text, p_limit integer, p_after bigint, p_kind text, p_owner text, p_updated_since timestamp with time zone); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.list_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path_prefix text, p_limit integer, p_after bigint, p_kind text, p_owner text, p_updated_since timestamp with time zone) IS 'A page of the documents a scope holds (those the caller may read, not deleted), in doc_id order, filtered by path prefix, kind, owner and update time; p_after is the last doc_id of the previous page.';


--
-- Name: list_grants(text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.list_grants(p_org_id text) RETURNS TABLE(principal_id text, kind text, scope_kind text, scope_id text, can_write boolean, created_at timestamp with time zone)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    select p.principal_id, p.kind, g.scope_kind, g.scope_id, g.can_write, g.created_at
    from data.principals p left join data.grants g on g.org_id = p.org_id and g.principal_id = p.principal_id
    where p.org_id = p_org_id
    order by p.principal_id, g.scope_kind, g.scope_id
$$;


ALTER FUNCTION api.list_grants(p_org_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION list_grants(p_org_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.list_grants(p_org_id text) IS 'Every principal of an org with its grants.';


--
-- Name: match_fragments(text, text, text, text, text[], text[], bigint[]); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.match_fragments(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespaces text[], p_content_hashes text[], p_simhashes bigint[]) RETURNS TABLE(ordinal integer, fragment_id bigint, distance integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    perform data._require_write(p_org_id, p_repo_id, p_persona_id, p_session_id);
    return query
    select c.ordinal::int, d.fragment_id, d.distance
    from unnest(p_namespaces, p_content_hashes, p_simhashes) with ordinality as c(namespace, content_hash, simhash, ordinal)
    left join lateral data._find_duplicate(p_org_id, p_repo_id, p_persona_id, p_session_id,
                                           c.namespace, c.content_hash, c.simhash) d on true
    order by c.ordinal;
end
$$;


ALTER FUNCTION api.match_fragments(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespaces text[], p_content_hashes text[], p_simhashes bigint[]) OWNER TO <migrator>;

--
-- Name: FUNCTION match_fragments(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespaces text[], p_content_hashes text[], p_simhashes bigint[]); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.match_fragments(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespaces text[], p_content_hashes text[], p_simhashes bigint[]) IS 'Which proposed chunks collapse into existing fragments (exact or SimHash distance <= 3).';


--
-- Name: metrics_org_sizes(); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.metrics_org_sizes() RETURNS TABLE(org_id text, active_fragments bigint, embeddings_estimated bigint, hnsw_bytes bigint, bm25_postings_estimated bigint, bm25_bytes bigint, fragment_bytes bigint)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    with parts as (
        select o.org_id,
               to_regclass(format('data.%I', 'fragments_' || o.org_no)) as fragments,
               to_regclass(format('data.%I', 'embeddings_' || o.org_no)) as embeddings,
               to_regclass(format('data.%I', 'bm25_postings_' || o.org_no)) as postings
        from data.orgs o
    )
    select p.org_id,
           coalesce((select sum(c.fragment_count) from data.bm25_corpus c where c.org_id = p.org_id), 0)::bigint,
           coalesce((select greatest(c.reltuples, 0) from pg_class c where c.oid = p.embeddings), 0)::bigint,
           coalesce((select sum(pg_relation_size(i.indexrelid))
                     from pg_index i join pg_class ic on ic.oid = i.indexrelid join pg_am am on am.oid = ic.relam
                     where i.indrelid = p.embeddings and am.amname = 'hnsw'), 0)::bigint,
           coalesce((select greatest(c.reltuples, 0) from pg_class c where c.oid = p.postings), 0)::bigint,
           coalesce(pg_total_relation_size(p.postings), 0)::bigint,
           coalesce(pg_total_relation_size(p.fragments), 0)::bigint
    from parts p
    order by p.org_id
$$;


ALTER FUNCTION api.metrics_org_sizes() OWNER TO <migrator>;

--
-- Name: FUNCTION metrics_org_sizes(); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.metrics_org_sizes() IS 'Per-org fragment counts and index sizes for GET /metrics (the service only).';


--
-- Name: model_backlog(integer, bigint, integer); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.model_backlog(p_model_id integer, p_after bigint DEFAULT 0, p_limit integer DEFAULT 64) RETURNS TABLE(fragment_id bigint, org_id text, path text, heading_path text[], text text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    select f.fragment_id, f.org_id,
           coalesce((select d.path from data.documents d where d.doc_id = f.doc_id),
                    (select d.path from data.fragment_sources s join data.documents d on d.doc_id = s.doc_id
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


ALTER FUNCTION api.model_backlog(p_model_id integer, p_after bigint, p_limit integer) OWNER TO <migrator>;

--
-- Name: FUNCTION model_backlog(p_model_id integer, p_after bigint, p_limit integer); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.model_backlog(p_model_id integer, p_after bigint, p_limit integer) IS 'Active fragments still lacking a vector of this generation, in id order.';


--
-- Name: model_generations(); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.model_generations() RETURNS TABLE(model_id integer, namespace text, name text, source text, dims integer, generation integer, status text, created_at timestamp with time zone, window_ends_at timestamp with time zone, promoted_at timestamp with time zone, retired_at timestamp with time zone, dropped_at timestamp with time zone, fragments bigint, vectors bigint, replays bigint, mean_overlap double precision, min_overlap double precision)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
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


ALTER FUNCTION api.model_generations() OWNER TO <migrator>;

--
-- Name: FUNCTION model_generations(); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.model_generations() IS 'Each generation: status, window, coverage (vectors over active fragments) and replay overlap, over what the caller may read; org-wide principals only.';


--
-- Name: nudge_attempted(bigint, text, integer, text, double precision, interval); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.nudge_attempted(p_nudge_id bigint, p_url text, p_status integer, p_error text, p_duration_ms double precision, p_retry_in interval) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    ok boolean := p_status between 200 and 299;
    nudge_org text;
begin
    update data.nudge_outbox n
    set attempts = n.attempts + 1, last_status = p_status, last_error = left(p_error, 1000),
        delivered_at = case when ok then clock_timestamp() end,
        next_attempt_at = case when ok then n.next_attempt_at
                               else clock_timestamp() + greatest(coalesce(p_retry_in, interval '0'), interval '0') end
    where n.nudge_id = p_nudge_id and n.delivered_at is null
    returning n.org_id into nudge_org;
    if nudge_org is null then
        raise exception 'no undelivered nudge %', p_nudge_id using errcode = 'P0002';
    end if;
    insert into data.nudge_deliveries (nudge_id, org_id, url, status, error, duration_ms)
    values (p_nudge_id, nudge_org, p_url, p_status, left(p_error, 1000), p_duration_ms);
end
$$;


ALTER FUNCTION api.nudge_attempted(p_nudge_id bigint, p_url text, p_status integer, p_error text, p_duration_ms double precision, p_retry_in interval) OWNER TO <migrator>;

--
-- Name: FUNCTION nudge_attempted(p_nudge_id bigint, p_url text, p_status integer, p_error text, p_duration_ms double precision, p_retry_in interval); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.nudge_attempted(p_nudge_id bigint, p_url text, p_status integer, p_error text, p_duration_ms double precision, p_retry_in interval) IS 'Record a delivery attempt: 2xx marks the nudge delivered, else it is retried after p_retry_in.';


--
-- Name: nudge_claim(text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.nudge_claim(p_org_id text DEFAULT NULL::text) RETURNS TABLE(nudge_id bigint, org_id text, url text, secret text, payload jsonb, attempts integer)
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    select n.nudge_id, n.org_id, w.url, w.secret, n.payload || jsonb_build_object('nudge_id', n.nudge_id), n.attempts
    from data.nudge_outbox n
    join data.org_webhooks w on w.org_id = n.org_id
    where n.delivered_at is null and n.next_attempt_at <= clock_timestamp() and w.enabled
      and (p_org_id is null or n.org_id = p_org_id)
    order by n.next_attempt_at, n.nudge_id
    limit 1
    for update of n skip locked
$$;


ALTER FUNCTION api.nudge_claim(p_org_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION nudge_claim(p_org_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.nudge_claim(p_org_id text) IS 'Lock and return the next nudge due, with its own org''s webhook URL and secret (the delivery worker''s; never an HTTP answer).';


--
-- Name: nudges_enqueue(text, timestamp with time zone); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.nudges_enqueue(p_org_id text DEFAULT NULL::text, p_as_of timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(org_id text, enqueued integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    o record;
    at timestamptz := coalesce(p_as_of, now());
    n int;
begin
    for o in
        select g.org_id, g.stale_window, g.stale_min_retrievals, g.stale_after, g.nudge_period
        from data.orgs g join data.org_webhooks w on w.org_id = g.org_id
        where w.enabled and (p_org_id is null or g.org_id = p_org_id)
        order by g.org_id
    loop
        insert into data.nudge_outbox (org_id, fragment_id, owner, period_start, payload)
        select o.org_id, s.fragment_id, f.owner,
               date_bin(o.nudge_period, at, timestamptz '2000-01-03 00:00:00+00'),
               jsonb_build_object(
                   'type', 'stale_fragment', 'org_id', o.org_id, 'owner', f.owner, 'owner_source', f.owner_source,
                   'fragment_id', s.fragment_id, 'repo_id', f.repo_id, 'kind', f.kind,
                   'path', src.path, 'anchor', src.anchor, 'doc_id', src.doc_id,
                   'retrievals', s.retrievals, 'window_days', (extract(epoch from o.stale_window) / 86400)::int,
                   'last_retrieved_at', s.last_retrieved_at, 'last_edited_at', f.updated_at,
                   'period_start', date_bin(o.nudge_period, at, timestamptz '2000-01-03 00:00:00+00'))
        from data._stale_core(o.org_id, at, o.stale_window, o.stale_min_retrievals, o.stale_after) s
        join data.fragments f on f.org_id = o.org_id and f.fragment_id = s.fragment_id
        left join lateral (
            select x.doc_id, d.path, x.anchor from data.fragment_sources x join data.documents d on d.doc_id = x.doc_id
            where x.org_id = o.org_id and x.fragment_id = f.fragment_id and x.retired_at is null
            order by x.content_hash = f.content_hash desc, x.created_at desc, x.doc_id, x.ordinal
            limit 1
        ) src on true
        where f.session_id is null
        on conflict on constraint nudge_once_per_period do nothing;
        get diagnostics n = row_count;
        org_id := o.org_id;
        enqueued := n;
        return next;
    end loop;
end
$$;


ALTER FUNCTION api.nudges_enqueue(p_org_id text, p_as_of timestamp with time zone) OWNER TO <migrator>;

--
-- Name: FUNCTION nudges_enqueue(p_org_id text, p_as_of timestamp with time zone); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.nudges_enqueue(p_org_id text, p_as_of timestamp with time zone) IS 'Queue one nudge per stale fragment and period for each org with an enabled webhook (idempotent within a period); run by the delivery worker.';


--
-- Name: open_session(text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.open_session(p_session_id text) RETURNS timestamp with time zone
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    me record;
    opened int;
    expires timestamptz;
begin
    select * into me from data._principal_or_raise();
    if not exists (select 1 from data.grants g
                   where g.org_id = me.org_id and g.principal_id = me.principal_id and g.can_write) then
        -- Opening a session is writing: read-only principals cannot.
        raise exception 'principal % may not open sessions (it holds no write grant)', me.principal_id
            using errcode = '42501';
    end if;
    perform data._require_org(me.org_id);
    -- Insert first, then decide: a concurrent opener of the same new session waits here
    -- for the first one's commit, and then joins only if it holds a write grant on it.
    insert into data.sessions (org_id, session_id, expires_at)
    select me.org_id, p_session_id, now() + o.session_ttl from data.orgs o where o.org_id = me.org_id
    on conflict (org_id, session_id) do nothing;
    get diagnostics opened = row_count;
    if opened = 0 and not exists (
            select 1 from data.grants g
            where g.org_id = me.org_id and g.principal_id = me.principal_id
              and g.scope_kind = 'session' and g.scope_id = p_session_id and g.can_write) then
        -- Joining needs a write grant on it already; a read grant is never upgraded.
        raise exception 'principal % may not write to session %', me.principal_id, p_session_id
            using errcode = '42501';
    end if;
    insert into data.grants (org_id, principal_id, scope_kind, scope_id, can_write)
    values (me.org_id, me.principal_id, 'session', p_session_id, true)
    on conflict (org_id, principal_id, scope_kind, scope_id) do nothing;
    select s.expires_at into expires from data.sessions s where s.org_id = me.org_id and s.session_id = p_session_id;
    return expires;
exception when check_violation then
    raise exception 'invalid session identifier: %', sqlerrm using errcode = '22023';
end
$$;


ALTER FUNCTION api.open_session(p_session_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION open_session(p_session_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.open_session(p_session_id text) IS 'Open a new session of the bound principal''s org (it needs some write grant), or confirm one it may write to.';


--
-- Name: owner_settings(text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.owner_settings(p_org_id text) RETURNS TABLE(org_id text, default_owner text, stale_after_days integer, window_days integer, min_retrievals integer, nudge_period_hours integer)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    perform data._require_read(p_org_id, null, null, null);
    return query
    select o.org_id, o.default_owner, (extract(epoch from o.stale_after) / 86400)::int,
           (extract(epoch from o.stale_window) / 86400)::int, o.stale_min_retrievals,
           (extract(epoch from o.nudge_period) / 3600)::int
    from data.orgs o where o.org_id = p_org_id;
end
$$;


ALTER FUNCTION api.owner_settings(p_org_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION owner_settings(p_org_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.owner_settings(p_org_id text) IS 'The org''s default owner and staleness thresholds: text older than stale_after_days, at least min_retrievals retrievals within window_days; one nudge per fragment per nudge_period_hours.';


--
-- Name: owner_settings_set(text, text, integer, integer, integer, integer); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.owner_settings_set(p_org_id text, p_default_owner text DEFAULT NULL::text, p_stale_after_days integer DEFAULT NULL::integer, p_window_days integer DEFAULT NULL::integer, p_min_retrievals integer DEFAULT NULL::integer, p_nudge_period_hours integer DEFAULT NULL::integer) RETURNS TABLE(org_id text, default_owner text, stale_after_days integer, window_days integer, min_retrievals integer, nudge_period_hours integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    perform data._require_write(p_org_id, null, null, null);
    if p_default_owner ~ '[[:cntrl:]]' or length(p_default_owner) > 256
       or p_stale_after_days not between 1 and 36500 or p_window_days not between 1 and 36500
       or p_min_retrievals not between 1 and 1000000 or p_nudge_period_hours not between 1 and 87600 then
        raise exception 'default owner: up to 256 characters; days: 1 to 36500; min retrievals: 1 to 1000000; period: 1 to 87600 hours'
            using errcode = '22023';
    end if;
    update data.orgs o
    set default_owner = case when p_default_owner is null then o.default_owner else nullif(p_default_owner, '') end,
        stale_after = coalesce(make_interval(days => p_stale_after_days), o.stale_after),
        stale_window = coalesce(make_interval(days => p_window_days), o.stale_window),
        stale_min_retrievals = coalesce(p_min_retrievals, o.stale_min_retrievals),
        nudge_period = coalesce(make_interval(hours => p_nudge_period_hours), o.nudge_period)
    where o.org_id = p_org_id;
    return query select * from api.owner_settings(p_org_id);
end
$$;


ALTER FUNCTION api.owner_settings_set(p_org_id text, p_default_owner text, p_stale_after_days integer, p_window_days integer, p_min_retrievals integer, p_nudge_period_hours integer) OWNER TO <migrator>;

--
-- Name: FUNCTION owner_settings_set(p_org_id text, p_default_owner text, p_stale_after_days integer, p_window_days integer, p_min_retrievals integer, p_nudge_period_hours integer); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.owner_settings_set(p_org_id text, p_default_owner text, p_stale_after_days integer, p_window_days integer, p_min_retrievals integer, p_nudge_period_hours integer) IS 'Set the org''s default owner (empty: none) and staleness thresholds; needs an org write grant.';


--
-- Name: owners_reassign(text, text, text, text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.owners_reassign(p_org_id text, p_from text, p_to text, p_repo_id text DEFAULT NULL::text, p_path_prefix text DEFAULT NULL::text) RETURNS TABLE(reassignment_id bigint, documents integer, fragments integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    me record;
    docs bigint[];
    moved_fragments int;
    id bigint;
begin
    perform data._require_write(p_org_id, p_repo_id, null, null);
    perform data._require_scope(p_org_id, p_repo_id, null);
    select * into me from data._principal_or_raise();
    if p_from is null or p_to is null or length(p_to) not between 1 and 256 or p_to ~ '[[:cntrl:]]'
       or length(p_from) not between 1 and 256 then
        raise exception 'reassign from one named owner to another (1 to 256 characters)' using errcode = '22023';
    end if;
    if p_path_prefix is not null and (length(p_path_prefix) not between 1 and 1024 or p_path_prefix ~ '[[:cntrl:]]') then
        raise exception 'a path prefix has 1 to 1024 characters' using errcode = '22023';
    end if;
    perform pg_advisory_xact_lock(hashtextextended('contexts.ingest:' || p_org_id, 0));
    with moved as (
        update data.documents d set owner = p_to, owner_source = 'reassigned'
        where d.org_id = p_org_id and d.owner = p_from and d.deleted_at is null and d.session_id is null
          and (p_repo_id is null or d.repo_id = p_repo_id)
          and (p_path_prefix is null or starts_with(d.path, p_path_prefix))
          and (p_from <> p_to)
        returning d.doc_id
    )
    select coalesce(array_agg(m.doc_id), '{}') into docs from moved m;
    with moved as (
        update data.fragments f set owner = p_to, owner_source = 'reassigned'
        where f.org_id = p_org_id and f.owner = p_from and f.session_id is null
          and exists (select 1 from data.fragment_sources s
                      where s.org_id = p_org_id and s.fragment_id = f.fragment_id and s.doc_id = any (docs)
                        and s.retired_at is null)
        returning 1
    )
    select count(*)::int into moved_fragments from moved;
    insert into data.owner_reassignments (org_id, from_owner, to_owner, repo_id, path_prefix, documents, fragments,
                                          principal_id)
    values (p_org_id, p_from, p_to, p_repo_id, p_path_prefix, cardinality(docs), moved_fragments, me.principal_id)
    returning data.owner_reassignments.reassignment_id into id;
    return query select id, cardinality(docs), moved_fragments;
end
$$;


ALTER FUNCTION api.owners_reassign(p_org_id text, p_from text, p_to text, p_repo_id text, p_path_prefix text) OWNER TO <migrator>;

--
-- Name: FUNCTION owners_reassign(p_org_id text, p_from text, p_to text, p_repo_id text, p_path_prefix text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.owners_reassign(p_org_id text, p_from text, p_to text, p_repo_id text, p_path_prefix text) IS 'Reassign documents (and their fragments) from one owner to another, optionally within a repo and path prefix; needs a write grant there; audited in data.owner_reassignments, no version written.';


--
-- Name: owners_resolve(text, text, bigint[], text[]); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.owners_resolve(p_org_id text, p_repo_id text, p_doc_ids bigint[], p_owners text[]) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    fallback text;
    changed int;
begin
    perform data._require_write(p_org_id, p_repo_id, null, null);
    if cardinality(p_doc_ids) is distinct from cardinality(p_owners) then
        raise exception 'one owner (or null) per document' using errcode = '22023';
    end if;
    if exists (select 1 from unnest(p_owners) o where o is not null and (length(o) not between 1 and 256 or o ~ '[[:cntrl:]]')) then
        raise exception 'an owner is a name of 1 to 256 characters without control characters' using errcode = '22023';
    end if;
    select o.default_owner into fallback from data.orgs o where o.org_id = p_org_id;
    with wanted as (
        select w.doc_id, coalesce(w.owner, fallback, 'unowned') as owner,
               case when w.owner is not null then 'codeowners' when fallback is not null then 'default' else 'none' end
                   as owner_source
        from unnest(p_doc_ids, p_owners) w(doc_id, owner)
    ), moved as (
        update data.documents d set owner = w.owner, owner_source = w.owner_source
        from wanted w
        where d.doc_id = w.doc_id and d.org_id = p_org_id and d.repo_id = p_repo_id
          and d.owner_source in ('codeowners', 'default', 'none')
          and (d.owner, d.owner_source) is distinct from (w.owner, w.owner_source)
        returning d.doc_id, d.owner, d.owner_source
    ), fragments as (
        update data.fragments f set owner = m.owner, owner_source = m.owner_source
        from moved m
        where f.org_id = p_org_id and f.doc_id = m.doc_id
        returning 1
    )
    select count(*)::int into changed from moved;
    return changed;
end
$$;


ALTER FUNCTION api.owners_resolve(p_org_id text, p_repo_id text, p_doc_ids bigint[], p_owners text[]) OWNER TO <migrator>;

--
-- Name: FUNCTION owners_resolve(p_org_id text, p_repo_id text, p_doc_ids bigint[], p_owners text[]); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.owners_resolve(p_org_id text, p_repo_id text, p_doc_ids bigint[], p_owners text[]) IS 'Set the CODEOWNERS owners of documents whose owner was not named (null: the org default); their fragments follow; no version is written.';


--
-- Name: owners_unnamed(text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.owners_unnamed(p_org_id text, p_repo_id text) RETURNS TABLE(doc_id bigint, path text, owner text, owner_source text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    perform data._require_write(p_org_id, p_repo_id, null, null);
    return query
    select d.doc_id, d.path, d.owner, d.owner_source from data.documents d
    where d.org_id = p_org_id and d.repo_id = p_repo_id and d.persona_id is null and d.session_id is null
      and d.deleted_at is null and d.owner_source in ('codeowners', 'default', 'none')
    order by d.doc_id;
end
$$;


ALTER FUNCTION api.owners_unnamed(p_org_id text, p_repo_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION owners_unnamed(p_org_id text, p_repo_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.owners_unnamed(p_org_id text, p_repo_id text) IS 'Live documents of a repo whose owner came from CODEOWNERS or the default (the caller needs a write grant on the repo).';


--
-- Name: persona_backlog(integer); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.persona_backlog(p_model_id integer) RETURNS TABLE(org_id text, persona_id text, description text, updated_by text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    select v.org_id, v.persona_id, v.description, v.updated_by
    from data.persona_vectors v
    join data.embedding_models cur on cur.model_id = v.model_id and cur.status = 'active'
    join data.embedding_models em on em.model_id = p_model_id and em.namespace = cur.namespace
    where not exists (select 1 from data.persona_vectors w
                      where w.org_id = v.org_id and w.persona_id = v.persona_id and w.model_id = p_model_id)
    order by v.org_id, v.persona_id
$$;


ALTER FUNCTION api.persona_backlog(p_model_id integer) OWNER TO <migrator>;

--
-- Name: FUNCTION persona_backlog(p_model_id integer); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.persona_backlog(p_model_id integer) IS 'Persona descriptions an upgrade still has to embed with this generation.';


--
-- Name: persona_vectors_set(text, text, text, jsonb); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.persona_vectors_set(p_org_id text, p_persona_id text, p_description text, p_vectors jsonb) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
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


ALTER FUNCTION api.persona_vectors_set(p_org_id text, p_persona_id text, p_description text, p_vectors jsonb) OWNER TO <migrator>;

--
-- Name: FUNCTION persona_vectors_set(p_org_id text, p_persona_id text, p_description text, p_vectors jsonb); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.persona_vectors_set(p_org_id text, p_persona_id text, p_description text, p_vectors jsonb) IS 'Store a persona profile''s description embedded per namespace (the persona term''s evidence with its own fragments); write grant on the persona.';


--
-- Name: pin_add(text, text, text, text, bigint, text, timestamp with time zone); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.pin_add(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_id bigint, p_reason text, p_expires_at timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(pin_id bigint, org_id text, repo_id text, persona_id text, session_id text, fragment_id bigint, pinned_by text, reason text, created_at timestamp with time zone, expires_at timestamp with time zone, kind text, negative boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    me record;
    frag record;
    pin data.pins;
begin
    select * into me from data._principal_or_raise();
    perform data._require_write(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform data._require_scope(p_org_id, p_repo_id, p_persona_id);
    if p_reason is null or btrim(p_reason) = '' or length(p_reason) > 1000 then
        raise exception 'a pin needs a reason (1 to 1000 characters)' using errcode = '22023';
    end if;
    if p_expires_at is not null and p_expires_at <= statement_timestamp() then
        raise exception 'expires_at % is not in the future', p_expires_at using errcode = '22023';
    end if;
    -- Security definer reads past row-level security: the policy's read rule is applied
    -- by data._readable_fragments, the one statement of it that definer code shares.
    select f.fragment_id, f.repo_id, f.persona_id, f.session_id into frag
    from data.fragments f
    where f.org_id = p_org_id and f.fragment_id = p_fragment_id and f.active
      and f.fragment_id = any (data._readable_fragments(p_org_id, array[p_fragment_id]));
    if frag.fragment_id is null then
        raise exception 'unknown fragment: %', p_fragment_id using errcode = 'P0002';
    end if;
    if data._in_scope(frag.repo_id, frag.persona_id, frag.session_id, p_repo_id, p_persona_id, p_session_id)
           is not true
       or (p_repo_id is null and frag.repo_id is not null) then
        raise exception 'fragment % is not visible in that scope', p_fragment_id using errcode = '22023',
            hint = 'Pin it to its own scope or a narrower one (its repo, persona or session).';
    end if;
    insert into data.pins (org_id, repo_id, persona_id, session_id, fragment_id, pinned_by, reason, expires_at)
    values (p_org_id, p_repo_id, p_persona_id, p_session_id, p_fragment_id, me.principal_id, p_reason, p_expires_at)
    returning * into pin;
    return query
    select pin.pin_id, pin.org_id, pin.repo_id, pin.persona_id, pin.session_id, pin.fragment_id, pin.pinned_by,
           pin.reason, pin.created_at, pin.expires_at, f.kind, f.negative
    from data.fragments f where f.org_id = pin.org_id and f.fragment_id = pin.fragment_id;
end
$$;


ALTER FUNCTION api.pin_add(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_id bigint, p_reason text, p_expires_at timestamp with time zone) OWNER TO <migrator>;

--
-- Name: FUNCTION pin_add(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_id bigint, p_reason text, p_expires_at timestamp with time zone); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.pin_add(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_id bigint, p_reason text, p_expires_at timestamp with time zone) IS 'Pin a fragment to a scope (write grant there): composed first in every retrieval that sees that scope.';


--
-- Name: pin_remove(bigint); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.pin_remove(p_pin_id bigint) RETURNS TABLE(pin_id bigint, org_id text, repo_id text, persona_id text, session_id text, fragment_id bigint, pinned_by text, reason text, created_at timestamp with time zone, expires_at timestamp with time zone, kind text, negative boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    me record;
    pin data.pins;
begin
    select * into me from data._principal_or_raise();
    select p.* into pin from data.pins p
    where p.pin_id = p_pin_id and p.org_id = me.org_id
      and (p.repo_id is null or data.acl_org_wide() or p.repo_id = any (data.acl_repos()))
      and (p.persona_id is null or data.acl_org_wide() or p.persona_id = any (data.acl_personas()))
      and (p.session_id is null or p.session_id = any (data.acl_sessions()));
    if pin.pin_id is null then
        raise exception 'unknown pin: %', p_pin_id using errcode = 'P0002';
    end if;
    perform data._require_write(pin.org_id, pin.repo_id, pin.persona_id, pin.session_id);
    delete from data.pins p where p.pin_id = pin.pin_id;
    return query
    select pin.pin_id, pin.org_id, pin.repo_id, pin.persona_id, pin.session_id, pin.fragment_id, pin.pinned_by,
           pin.reason, pin.created_at, pin.expires_at, f.kind, f.negative
    from data.fragments f where f.org_id = pin.org_id and f.fragment_id = pin.fragment_id;
end
$$;


ALTER FUNCTION api.pin_remove(p_pin_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION pin_remove(p_pin_id bigint); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.pin_remove(p_pin_id bigint) IS 'Remove a pin (write grant on its scope).';


--
-- Name: pins_list(text, text, text, text, boolean); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.pins_list(p_org_id text, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_include_expired boolean DEFAULT false) RETURNS TABLE(pin_id bigint, org_id text, repo_id text, persona_id text, session_id text, fragment_id bigint, pinned_by text, reason text, created_at timestamp with time zone, expires_at timestamp with time zone, kind text, negative boolean, active boolean, expired boolean)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform data._require_org(p_org_id);
    perform data._require_scope(p_org_id, p_repo_id, p_persona_id);
    return query
    select p.pin_id, p.org_id, p.repo_id, p.persona_id, p.session_id, p.fragment_id, p.pinned_by, p.reason,
           p.created_at, p.expires_at, f.kind, f.negative, f.active,
           coalesce(p.expires_at <= statement_timestamp(), false)
    from data.pins p
    join data.fragments f on f.fragment_id = p.fragment_id and f.org_id = p.org_id
    where p.org_id = p_org_id
      and data._in_scope(p.repo_id, p.persona_id, p.session_id, p_repo_id, p_persona_id, p_session_id)
      and data._in_scope(f.repo_id, f.persona_id, f.session_id, p_repo_id, p_persona_id, p_session_id)
      and (p_include_expired or p.expires_at is null or p.expires_at > statement_timestamp())
    order by p.created_at, p.pin_id;
end
$$;


ALTER FUNCTION api.pins_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_expired boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION pins_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_expired boolean); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.pins_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_expired boolean) IS 'Pins a retrieval in this scope sees, in the order they are composed (earliest first).';


--
-- Name: policy_bypass(); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.policy_bypass() RETURNS TABLE(role_name text, superuser boolean, bypassrls boolean, can_login boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    select r.rolname::text, r.rolsuper, r.rolbypassrls, r.rolcanlogin
    from pg_roles r where (r.rolsuper or r.rolbypassrls) and r.rolname !~ '^pg_'
    order by 1
$$;


ALTER FUNCTION api.policy_bypass() OWNER TO <migrator>;

--
-- Name: FUNCTION policy_bypass(); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.policy_bypass() IS 'Roles that bypass row-level security (superusers, BYPASSRLS).';


--
-- Name: policy_report(); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.policy_report() RETURNS TABLE(table_name text, tenant boolean, rls_enabled boolean, rls_forced boolean, policies jsonb, may_select text[], may_insert text[], may_update text[], may_delete text[], partitions integer, unprotected_partitions text[])
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    with tables as (
        select c.oid, c.relname::text as relname, c.relrowsecurity, c.relforcerowsecurity, c.relowner, c.relacl
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'data' and c.relkind in ('r', 'p') and not c.relispartition
    ), acl as (
        -- Table-level grants (a NULL acl is the owner's default), then column-level ones.
        select t.oid, a.privilege_type, a.grantee, false as some_columns
        from tables t, aclexplode(coalesce(t.relacl, acldefault('r', t.relowner))) a
        union
        select t.oid, a.privilege_type, a.grantee, true
        from tables t join pg_attribute att on att.attrelid = t.oid and att.attnum > 0 and not att.attisdropped,
             aclexplode(att.attacl) a
    ), holders as (
        select acl.oid, acl.privilege_type,
               array_agg(distinct case when acl.grantee = 0 then 'public' else pg_get_userbyid(acl.grantee) end
                         || case when acl.some_columns then ' (some columns)' else '' end
                         || case when acl.grantee = t.relowner then ' (owner)' else '' end) as roles
        from acl join tables t on t.oid = acl.oid
        where not (acl.some_columns and exists (
                select 1 from acl whole where whole.oid = acl.oid and whole.grantee = acl.grantee
                  and whole.privilege_type = acl.privilege_type and not whole.some_columns))
        group by acl.oid, acl.privilege_type
    )
    select t.relname,
           t.relname not in ('embedding_namespaces', 'embedding_models', 'eval_runs', 'eval_figures',
                             'authority_refreshes'),
           t.relrowsecurity,
           t.relforcerowsecurity,
           coalesce((select jsonb_agg(jsonb_build_object(
                        'name', p.polname,
                        'command', case p.polcmd when 'r' then 'select' when 'a' then 'insert' when 'w' then 'update'
                                                 when 'd' then 'delete' else 'all' end,
                        'permissive', p.polpermissive,
                        'roles', array(select case when r = 0 then 'public' else pg_get_userbyid(r) end
                                       from unnest(p.polroles) r order by 1),
                        'using', pg_get_expr(p.polqual, p.polrelid),
                        'check', pg_get_expr(p.polwithcheck, p.polrelid)) order by p.polname)
                     from pg_policy p where p.polrelid = t.oid), '[]'::jsonb),
           coalesce((select h.roles from holders h where h.oid = t.oid and h.privilege_type = 'SELECT'), '{}'),
           coalesce((select h.roles from holders h where h.oid = t.oid and h.privilege_type = 'INSERT'), '{}'),
           coalesce((select h.roles from holders h where h.oid = t.oid and h.privilege_type = 'UPDATE'), '{}'),
           coalesce((select h.roles from holders h where h.oid = t.oid and h.privilege_type = 'DELETE'), '{}'),
           (select count(*)::int from pg_inherits i where i.inhparent = t.oid),
           array(select c.relname::text from pg_inherits i join pg_class c on c.oid = i.inhrelid
                 where i.inhparent = t.oid and not (c.relrowsecurity and c.relforcerowsecurity)
                 order by 1)
    from tables t
    order by t.relname
$$;


ALTER FUNCTION api.policy_report() OWNER TO <migrator>;

--
-- Name: FUNCTION policy_report(); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.policy_report() IS 'Every table of schema data: tenant data or not, row-level security (enabled, forced), policies, who may select/insert/update/delete.';


--
-- Name: promote_model(text, integer); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.promote_model(p_namespace text, p_generation integer) RETURNS TABLE(model_id integer, name text, generation integer, replaced integer, kept_until timestamp with time zone)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
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
    select count(*) into missing from api.model_backlog(target.model_id, 0, 2147483647);
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


ALTER FUNCTION api.promote_model(p_namespace text, p_generation integer) OWNER TO <migrator>;

--
-- Name: FUNCTION promote_model(p_namespace text, p_generation integer); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.promote_model(p_namespace text, p_generation integer) IS 'Make a fully embedded shadow (or a retired generation within its window) the active one; the replaced one is retired and kept until the window ends.';


--
-- Name: purge_expired_sessions(); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.purge_expired_sessions() RETURNS TABLE(org_id text, session_id text, documents bigint, fragments bigint)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    return query
    with expired as (
        select s.org_id, s.session_id from data.sessions s where s.expires_at <= now()
    ), counted as (
        select e.org_id, e.session_id,
               (select count(*) from data.documents d where d.org_id = e.org_id and d.session_id = e.session_id) as documents,
               (select count(*) from data.fragments f where f.org_id = e.org_id and f.session_id = e.session_id) as fragments
        from expired e
    ), dropped_fragments as (
        -- Sources go with their documents (cascade); fragments are labelled, not sourced, by session.
        delete from data.fragments f using expired e where f.org_id = e.org_id and f.session_id = e.session_id
    ), dropped_grants as (
        delete from data.grants g using expired e
        where g.org_id = e.org_id and g.scope_kind = 'session' and g.scope_id = e.session_id
    ), dropped_sessions as (
        delete from data.sessions s using expired e where s.org_id = e.org_id and s.session_id = e.session_id
    )
    select c.org_id, c.session_id, c.documents, c.fragments from counted c order by c.org_id, c.session_id;
end
$$;


ALTER FUNCTION api.purge_expired_sessions() OWNER TO <migrator>;

--
-- Name: FUNCTION purge_expired_sessions(); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.purge_expired_sessions() IS 'Delete expired sessions with their documents, fragments and grants.';


--
-- Name: ranking_profile(text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.ranking_profile(p_org_id text, p_persona_id text DEFAULT NULL::text) RETURNS TABLE(org_id text, persona_id text, w_rerank double precision, w_freshness double precision, w_authority double precision, w_pinned double precision, w_persona double precision, halflife_days jsonb, description text, updated_by text, updated_at timestamp with time zone, effective jsonb)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
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


ALTER FUNCTION api.ranking_profile(p_org_id text, p_persona_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION ranking_profile(p_org_id text, p_persona_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.ranking_profile(p_org_id text, p_persona_id text) IS 'The ranking profile stored for an org (persona null) or persona, and the one a retrieval there uses.';


--
-- Name: ranking_profile_delete(text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.ranking_profile_delete(p_org_id text, p_persona_id text) RETURNS TABLE(org_id text, persona_id text, w_rerank double precision, w_freshness double precision, w_authority double precision, w_pinned double precision, w_persona double precision, halflife_days jsonb, description text, updated_by text, updated_at timestamp with time zone, effective jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
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


ALTER FUNCTION api.ranking_profile_delete(p_org_id text, p_persona_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION ranking_profile_delete(p_org_id text, p_persona_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.ranking_profile_delete(p_org_id text, p_persona_id text) IS 'Remove the stored ranking profile of an org (persona null) or persona (write grant there); it inherits again.';


--
-- Name: ranking_profile_set(text, text, double precision, double precision, double precision, double precision, double precision, jsonb, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.ranking_profile_set(p_org_id text, p_persona_id text, p_w_rerank double precision DEFAULT NULL::double precision, p_w_freshness double precision DEFAULT NULL::double precision, p_w_authority double precision DEFAULT NULL::double precision, p_w_pinned double precision DEFAULT NULL::double precision, p_w_persona double precision DEFAULT NULL::double precision, p_halflife_days jsonb DEFAULT '{}'::jsonb, p_description text DEFAULT NULL::text) RETURNS TABLE(org_id text, persona_id text, w_rerank double precision, w_freshness double precision, w_authority double precision, w_pinned double precision, w_persona double precision, halflife_days jsonb, description text, updated_by text, updated_at timestamp with time zone, effective jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
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
    delete from data.ranking_profiles r
    where r.org_id = p_org_id and r.persona_id is not distinct from p_persona_id;
    -- Vectors of another description are evidence no more (the writer embeds the new one).
    delete from data.persona_vectors v
    where v.org_id = p_org_id and v.persona_id = p_persona_id and v.description is distinct from p_description;
    insert into data.ranking_profiles as r (org_id, persona_id, w_rerank, w_freshness, w_authority, w_pinned,
                                            w_persona, halflife_days, description, updated_by)
    values (p_org_id, p_persona_id, p_w_rerank, p_w_freshness, p_w_authority, p_w_pinned, p_w_persona,
            coalesce(p_halflife_days, '{}'), p_description, me.principal_id)
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


ALTER FUNCTION api.ranking_profile_set(p_org_id text, p_persona_id text, p_w_rerank double precision, p_w_freshness double precision, p_w_authority double precision, p_w_pinned double precision, p_w_persona double precision, p_halflife_days jsonb, p_description text) OWNER TO <migrator>;

--
-- Name: FUNCTION ranking_profile_set(p_org_id text, p_persona_id text, p_w_rerank double precision, p_w_freshness double precision, p_w_authority double precision, p_w_pinned double precision, p_w_persona double precision, p_halflife_days jsonb, p_description text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.ranking_profile_set(p_org_id text, p_persona_id text, p_w_rerank double precision, p_w_freshness double precision, p_w_authority double precision, p_w_pinned double precision, p_w_persona double precision, p_halflife_days jsonb, p_description text) IS 'Create or replace the blend weights and freshness half-lives of an org (persona null) or a persona (write grant there).';


--
-- Name: ranking_profiles(text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.ranking_profiles(p_org_id text) RETURNS TABLE(org_id text, persona_id text, w_rerank double precision, w_freshness double precision, w_authority double precision, w_pinned double precision, w_persona double precision, halflife_days jsonb, description text, updated_by text, updated_at timestamp with time zone, effective jsonb)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
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


ALTER FUNCTION api.ranking_profiles(p_org_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION ranking_profiles(p_org_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.ranking_profiles(p_org_id text) IS 'Stored ranking profiles the caller may read, each with the profile in effect.';


--
-- Name: reading_backlog(bytea, bigint, integer); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.reading_backlog(p_prefix bytea, p_after bigint DEFAULT 0, p_limit integer DEFAULT 256) RETURNS TABLE(fragment_id bigint, org_id text, text text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    select f.fragment_id, f.org_id, f.text
    from data.fragments f
    where f.fragment_id > p_after
      and (f.reading is null or substring(f.reading from 1 for octet_length(p_prefix)) <> p_prefix)
    order by f.fragment_id
    limit p_limit
$$;


ALTER FUNCTION api.reading_backlog(p_prefix bytea, p_after bigint, p_limit integer) OWNER TO <migrator>;

--
-- Name: FUNCTION reading_backlog(p_prefix bytea, p_after bigint, p_limit integer); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.reading_backlog(p_prefix bytea, p_after bigint, p_limit integer) IS 'Fragments whose learned-reranker reading is missing or outdated, in id order.';


--
-- Name: reading_backlog_size(bytea); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.reading_backlog_size(p_prefix bytea) RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    select count(*) from data.fragments f
    where f.reading is null or substring(f.reading from 1 for octet_length(p_prefix)) <> p_prefix
$$;


ALTER FUNCTION api.reading_backlog_size(p_prefix bytea) OWNER TO <migrator>;

--
-- Name: FUNCTION reading_backlog_size(p_prefix bytea); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.reading_backlog_size(p_prefix bytea) IS 'How many fragments lack an up-to-date learned-reranker reading.';


--
-- Name: record_eval_run(text, jsonb, jsonb, timestamp with time zone, text, jsonb, jsonb, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.record_eval_run(p_command text, p_pipeline jsonb, p_options jsonb, p_started_at timestamp with time zone, p_contexts_version text, p_figures jsonb DEFAULT '[]'::jsonb, p_replays jsonb DEFAULT '[]'::jsonb, p_outcome text DEFAULT NULL::text) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $_$
declare
    id bigint;
    e record;
begin
    if p_command is null or p_command not in ('run', 'gate', 'replay') then
        raise exception 'eval command must be run, gate or replay, not %', coalesce(p_command, 'null')
            using errcode = '22023';
    end if;
    if jsonb_typeof(p_pipeline) is distinct from 'object' or jsonb_typeof(p_options) is distinct from 'object' then
        raise exception 'an eval run records its pipeline and options as JSON objects' using errcode = '22023';
    end if;
    if p_started_at is null then
        raise exception 'an eval run records when it started' using errcode = '22023';
    end if;
    if jsonb_typeof(p_figures) is distinct from 'array' or jsonb_typeof(p_replays) is distinct from 'array' then
        raise exception 'figures and replays are JSON arrays' using errcode = '22023';
    end if;
    if p_outcome is not null and (p_command <> 'gate' or p_outcome not in ('passed', 'failed', 'baseline')) then
        raise exception 'only a gate run has an outcome (passed, failed or baseline), not %', p_outcome
            using errcode = '22023';
    end if;
    insert into data.eval_runs (command, pipeline, options, outcome, contexts_version, started_at)
    values (p_command, p_pipeline, p_options, p_outcome, coalesce(p_contexts_version, ''), p_started_at)
    returning run_id into id;

    for e in select f.value as v, f.n from jsonb_array_elements(p_figures) with ordinality as f(value, n) loop
        if jsonb_typeof(e.v) is distinct from 'object'
           or jsonb_typeof(e.v -> 'dataset') is distinct from 'string'
           or jsonb_typeof(e.v -> 'split') is distinct from 'string'
           or jsonb_typeof(e.v -> 'stage') is distinct from 'string'
           or jsonb_typeof(e.v -> 'metric') is distinct from 'string'
           or coalesce(jsonb_typeof(e.v -> 'value'), 'null') not in ('number', 'null')
           or (e.v ? 'scope' and jsonb_typeof(e.v -> 'scope') not in ('string', 'null'))
           or (e.v ? 'queries' and jsonb_typeof(e.v -> 'queries') not in ('number', 'null'))
           or (e.v ? 'baseline' and jsonb_typeof(e.v -> 'baseline') not in ('number', 'null')) then
            raise exception 'figure %: needs dataset, split, stage and metric (strings) and value (a number)', e.n
                using errcode = '22023';
        end if;
        begin
            insert into data.eval_figures (run_id, dataset, split, stage, scope, metric, value, queries,
                                           baseline, status, waiver)
            values (id, e.v ->> 'dataset', e.v ->> 'split', e.v ->> 'stage', e.v ->> 'scope', e.v ->> 'metric',
                    (e.v ->> 'value')::float8, (e.v ->> 'queries')::numeric::int, (e.v ->> 'baseline')::float8,
                    e.v ->> 'status', e.v ->> 'waiver');
        exception when check_violation or unique_violation or numeric_value_out_of_range then
            raise exception 'figure %: %', e.n, sqlerrm using errcode = '22023';
        end;
    end loop;

    for e in select r.value as v, r.n from jsonb_array_elements(p_replays) with ordinality as r(value, n) loop
        if jsonb_typeof(e.v) is distinct from 'object'
           or jsonb_typeof(e.v -> 'org_id') is distinct from 'string'
           or jsonb_typeof(e.v -> 'principal_id') is distinct from 'string'
           or jsonb_typeof(e.v -> 'origin') is distinct from 'string'
           or jsonb_typeof(e.v -> 'query') is distinct from 'string'
           or jsonb_typeof(e.v -> 'request') is distinct from 'object'
           or jsonb_typeof(e.v -> 'flagged') is distinct from 'boolean'
           or jsonb_typeof(coalesce(e.v -> 'current', '[]')) <> 'array'
           or jsonb_typeof(coalesce(e.v -> 'candidate', '[]')) <> 'array'
           or jsonb_path_exists(coalesce(e.v -> 'current', '[]') || coalesce(e.v -> 'candidate', '[]'),
                                '$[*] ? (@.type() != "object")')
           or (e.v ? 'trace_id' and jsonb_typeof(e.v -> 'trace_id') not in ('string', 'null'))
           or (e.v ? 'overlap' and jsonb_typeof(e.v -> 'overlap') not in ('number', 'null'))
           or (e.v ? 'same_order' and jsonb_typeof(e.v -> 'same_order') not in ('boolean', 'null'))
           or (e.v ? 'error' and jsonb_typeof(e.v -> 'error') not in ('string', 'null')) then
            raise exception 'replay %: needs org_id, principal_id, origin, query (strings), request (an object), '
                            'flagged (a boolean), and current and candidate lists of objects', e.n
                using errcode = '22023';
        end if;
        perform data._require_org(e.v ->> 'org_id');
        begin
            insert into data.eval_replays (run_id, ordinal, org_id, principal_id, trace_id, origin, query, request,
                                           overlap, flagged, same_order, current, candidate, error)
            values (id, e.n, e.v ->> 'org_id', e.v ->> 'principal_id', (e.v ->> 'trace_id')::uuid,
                    e.v ->> 'origin', e.v ->> 'query', e.v -> 'request', (e.v ->> 'overlap')::float8,
                    (e.v ->> 'flagged')::boolean, (e.v ->> 'same_order')::boolean,
                    coalesce(e.v -> 'current', '[]'), coalesce(e.v -> 'candidate', '[]'), e.v ->> 'error');
        exception when check_violation or invalid_text_representation then
            raise exception 'replay %: %', e.n, sqlerrm using errcode = '22023';
        end;
    end loop;
    return id;
end
$_$;


ALTER FUNCTION api.record_eval_run(p_command text, p_pipeline jsonb, p_options jsonb, p_started_at timestamp with time zone, p_contexts_version text, p_figures jsonb, p_replays jsonb, p_outcome text) OWNER TO <migrator>;

--
-- Name: FUNCTION record_eval_run(p_command text, p_pipeline jsonb, p_options jsonb, p_started_at timestamp with time zone, p_contexts_version text, p_figures jsonb, p_replays jsonb, p_outcome text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.record_eval_run(p_command text, p_pipeline jsonb, p_options jsonb, p_started_at timestamp with time zone, p_contexts_version text, p_figures jsonb, p_replays jsonb, p_outcome text) IS 'Store one eval run (run, gate or replay) with its golden-set figures and replayed queries; returns its run_id. The operator''s, called by the eval commands.';


--
-- Name: record_model_replay(integer, uuid, double precision, integer, integer, boolean, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.record_model_replay(p_model_id integer, p_trace_id uuid, p_overlap double precision, p_shared_top integer, p_top integer, p_same_order boolean, p_error text DEFAULT NULL::text) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
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


ALTER FUNCTION api.record_model_replay(p_model_id integer, p_trace_id uuid, p_overlap double precision, p_shared_top integer, p_top integer, p_same_order boolean, p_error text) OWNER TO <migrator>;

--
-- Name: FUNCTION record_model_replay(p_model_id integer, p_trace_id uuid, p_overlap double precision, p_shared_top integer, p_top integer, p_same_order boolean, p_error text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.record_model_replay(p_model_id integer, p_trace_id uuid, p_overlap double precision, p_shared_top integer, p_top integer, p_same_order boolean, p_error text) IS 'Record one retrieval replayed on a shadow generation (its org and principal come from the trace).';


--
-- Name: record_trace(text, text, jsonb, jsonb, jsonb, double precision, jsonb); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.record_trace(p_org_id text, p_query text, p_request jsonb, p_pipeline jsonb, p_candidates jsonb, p_duration_ms double precision DEFAULT NULL::double precision, p_query_vectors jsonb DEFAULT NULL::jsonb) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $_$
declare
    me record;
    id uuid;
    m record;
    v vector;
    at int;
    models text[];
    vectors vector[];
begin
    select * into me from data.current_principal();
    if me.org_id is distinct from p_org_id then
        raise exception 'traces are recorded for the bound principal''s own org' using errcode = '42501';
    end if;
    if jsonb_typeof(p_request) is distinct from 'object' or jsonb_typeof(p_candidates) is distinct from 'array'
       or jsonb_path_exists(p_candidates, '$[*] ? (@.type() != "object")') then
        raise exception 'a trace records a request object and an array of candidate objects' using errcode = '22023';
    end if;
    if jsonb_typeof(p_query_vectors) not in ('object', 'null') then
        raise exception 'query vectors must be a JSON object keyed by namespace' using errcode = '22023';
    end if;
    if jsonb_typeof(p_query_vectors) = 'object' then
        if exists (select 1 from jsonb_object_keys(p_query_vectors) k
                   where not exists (select 1 from data.embedding_namespaces n where n.namespace = k)) then
            raise exception 'query vectors name an unknown embedding namespace: %',
                (select string_agg(k, ', ' order by k) from jsonb_object_keys(p_query_vectors) k
                 where not exists (select 1 from data.embedding_namespaces n where n.namespace = k))
                using errcode = '22023';
        end if;
        for m in
            select em.namespace, em.name, em.dims from data.embedding_models em
            where em.status = 'active' and p_query_vectors ? em.namespace
            order by em.namespace
        loop
            if jsonb_typeof(p_query_vectors -> m.namespace) is distinct from 'array'
               or jsonb_array_length(p_query_vectors -> m.namespace) <> m.dims then
                raise exception 'query vector for namespace % must have % dimensions', m.namespace, m.dims
                    using errcode = '22023';
            end if;
            v := (p_query_vectors -> m.namespace)::text::vector;
            at := array_position(models, m.name);
            if at is null then
                models := models || m.name;
                vectors := vectors || v;
            elsif vectors[at] <> v then
                raise exception 'namespaces sharing model % were given different query vectors', m.name
                    using errcode = '22023';
            end if;
        end loop;
    end if;
    insert into data.retrieval_traces (org_id, principal_id, query, request, pipeline, candidates, duration_ms,
                                       query_models, query_vectors)
    values (p_org_id, me.principal_id, p_query, p_request, p_pipeline, p_candidates, p_duration_ms,
            models, vectors)
    returning trace_id into id;
    return id;
end
$_$;


ALTER FUNCTION api.record_trace(p_org_id text, p_query text, p_request jsonb, p_pipeline jsonb, p_candidates jsonb, p_duration_ms double precision, p_query_vectors jsonb) OWNER TO <migrator>;

--
-- Name: FUNCTION record_trace(p_org_id text, p_query text, p_request jsonb, p_pipeline jsonb, p_candidates jsonb, p_duration_ms double precision, p_query_vectors jsonb); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.record_trace(p_org_id text, p_query text, p_request jsonb, p_pipeline jsonb, p_candidates jsonb, p_duration_ms double precision, p_query_vectors jsonb) IS 'Record one retrieval (for the bound principal), the fate of each candidate, and its query vectors.';


--
-- Name: refresh_authority(); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.refresh_authority() RETURNS TABLE(refreshed_at timestamp with time zone, duration_ms double precision, scored integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    started timestamptz := clock_timestamp();
    took float8;
    rows_scored int;
begin
    -- One refresh at a time (a second waits, then refreshes what the first did not see).
    perform pg_advisory_xact_lock(hashtext('contexts.authority'));
    refresh materialized view concurrently data.fragment_authority;
    took := extract(epoch from clock_timestamp() - started) * 1000.0;
    select count(*)::int into rows_scored from data.fragment_authority;
    delete from data.authority_refreshes;
    insert into data.authority_refreshes values (clock_timestamp(), took, rows_scored);
    return query select r.refreshed_at, r.duration_ms, r.scored from data.authority_refreshes r;
end
$$;


ALTER FUNCTION api.refresh_authority() OWNER TO <migrator>;

--
-- Name: FUNCTION refresh_authority(); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.refresh_authority() IS 'Refresh citation authority (data.fragment_authority) concurrently and record when and how long it took.';


--
-- Name: register_embedding_model(text, text, integer); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.register_embedding_model(p_namespace text, p_name text, p_dims integer) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    current data.embedding_models;
begin
    if not exists (select 1 from data.embedding_namespaces n where n.namespace = p_namespace) then
        raise exception 'unknown embedding namespace: %', p_namespace using errcode = '22023';
    end if;
    select * into current from data.embedding_models m
    where m.namespace = p_namespace and m.status = 'active';
    if found then
        if current.name = p_name and current.dims = p_dims then
            return current.model_id;
        end if;
        raise exception 'namespace % is indexed with % (% dims), not % (% dims)',
            p_namespace, current.name, current.dims, p_name, p_dims
            using errcode = '55000',
                  hint = case when exists (select 1 from data.embedding_models m where m.namespace = p_namespace
                                            and m.name = p_name and m.status = 'shadow')
                              then format('%s is the shadow generation of %s: promote it first (`contexts models promote %s`).',
                                          p_name, p_namespace, p_namespace)
                              else format('Configure the indexed model, or re-embed the namespace into the new one: `contexts models upgrade %s MODEL`.',
                                          p_namespace) end;
    end if;
    insert into data.embedding_models (namespace, name, dims, generation)
    values (p_namespace, p_name, p_dims,
            coalesce((select max(generation) from data.embedding_models where namespace = p_namespace), 0) + 1)
    returning * into current;
    -- One partial HNSW index per model: dimensions may differ between models, and a
    -- query for one model plans against that model's index alone. On the partitioned
    -- table it is one index per org partition (and new partitions get theirs).
    execute format(
        'create index if not exists %I on data.embeddings using hnsw ((embedding::vector(%s)) vector_cosine_ops) where model_id = %s',
        'embeddings_hnsw_model_' || current.model_id, current.dims, current.model_id);
    return current.model_id;
end
$$;


ALTER FUNCTION api.register_embedding_model(p_namespace text, p_name text, p_dims integer) OWNER TO <migrator>;

--
-- Name: FUNCTION register_embedding_model(p_namespace text, p_name text, p_dims integer); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.register_embedding_model(p_namespace text, p_name text, p_dims integer) IS 'Active model of a namespace; first use creates it and its HNSW index.';


--
-- Name: retrieve(text, text, text, text, text, integer, integer, jsonb, timestamp with time zone, boolean); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.retrieve(p_org_id text, p_query text, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_k_lexical integer DEFAULT 100, p_k_dense integer DEFAULT 100, p_fusion jsonb DEFAULT NULL::jsonb, p_as_of timestamp with time zone DEFAULT NULL::timestamp with time zone, p_include_superseded boolean DEFAULT false) RETURNS TABLE(fragment_id bigint, lexical_rank integer, lexical_score double precision, dense_rank integer, dense_similarity double precision, fused_score double precision, doc_id bigint, doc_version integer, path text, anchor text, repo_id text, namespace text, kind text, owner text, heading_path text[], symbol text, text text, token_count integer, chunker_version text, embedding_model text, updated_at timestamp with time zone, lexical_norm double precision, dense_norm double precision, lexical_weight double precision, dense_weight double precision, negative boolean, pin_id bigint, pin_rank integer, persona_similarity double precision, authority double precision, authority_refreshed_at timestamp with time zone, valid_from timestamp with time zone, valid_until timestamp with time zone, profile jsonb)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    vectors jsonb := '{}';
    missing text[] := '{}';
    source_trace uuid;
    fusion jsonb := p_fusion;
    rrf_k int := 60;
    k_dense int := p_k_dense;
    m record;
    hit record;
begin
    -- Checked before any notice, so a refusal is never preceded by one.
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform data._require_org(p_org_id);
    if p_query is null or btrim(p_query) = '' then
        raise exception 'query must not be empty' using errcode = '22023';
    end if;
    if p_k_lexical is null or p_k_dense is null or p_k_lexical not between 0 and 1000
       or p_k_dense not between 0 and 1000 then
        raise exception 'k_lexical and k_dense must be between 0 and 1000' using errcode = '22023';
    end if;
    if p_k_lexical = 0 and p_k_dense = 0 then
        raise exception 'k_lexical and k_dense are both 0: nothing would be retrieved' using errcode = '22023';
    end if;
    if p_fusion is not null then
        perform data._check_fusion(p_fusion);
    end if;

    if p_k_dense > 0 then
        for m in select em.namespace, em.name, em.dims from data.embedding_models em
                 where em.status = 'active' order by em.namespace loop
            select q.trace_id, q.embedding into hit
            from api.query_vectors q
            where q.query = p_query and q.org_id = p_org_id and q.model = m.name
              and vector_dims(q.embedding) = m.dims
            order by q.created_at desc, q.trace_id
            limit 1;
            if hit.trace_id is null then
                missing := missing || m.namespace;
            else
                vectors := vectors || jsonb_build_object(m.namespace, hit.embedding::text::jsonb);
                source_trace := coalesce(source_trace, hit.trace_id);
            end if;
        end loop;
        if vectors = '{}' then
            k_dense := 0;
            raise notice 'no stored query vector for this exact text: lexical search only (BM25)'
                using hint = 'Retrieve the text once through the service (POST /contexts/retrieve, or '
                             '`contexts query TEXT --org ORG`) as a principal whose traces you may read; '
                             'its trace keeps the query vector (docs/analysts.md).';
        elsif cardinality(missing) > 0 then
            raise notice 'no stored query vector for namespace(s) %: dense search skips them',
                array_to_string(missing, ', ');
        end if;
    end if;

    if fusion is null and source_trace is not null then
        -- The fusion the service used for this very text (its weights depend on the
        -- query's shape), when the trace recorded a usable one.
        select t.pipeline -> 'fusion' into fusion from api.retrieval_traces t where t.trace_id = source_trace;
        begin
            perform data._check_fusion(fusion);
        exception when sqlstate '22023' then
            fusion := null;
        end;
    end if;
    if fusion ->> 'method' = 'rrf' and jsonb_typeof(fusion -> 'k') = 'number' then
        rrf_k := greatest(1, (fusion ->> 'k')::numeric::int);
    end if;

    return query
    select c.fragment_id, c.lexical_rank, c.lexical_score, c.dense_rank, c.dense_similarity, c.fused_score,
           c.doc_id, c.doc_version, c.path, c.anchor, c.repo_id, c.namespace, c.kind, c.owner, c.heading_path,
           c.symbol, c.text, c.token_count, c.chunker_version, c.embedding_model, c.updated_at, c.lexical_norm,
           c.dense_norm, c.lexical_weight, c.dense_weight, c.negative, c.pin_id, c.pin_rank,
           c.persona_similarity, c.authority, c.authority_refreshed_at, c.valid_from, c.valid_until, c.profile
    from api.retrieve_candidates(
        p_org_id, p_query, vectors, p_repo_id, p_persona_id, p_session_id, p_k_lexical, k_dense, rrf_k,
        coalesce(fusion, '{"method": "weighted", "dense_weight": 0.5, "lexical_weight": {"code": 0.2}}'),
        p_as_of => p_as_of, p_include_superseded => p_include_superseded) c;
end
$$;


ALTER FUNCTION api.retrieve(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_fusion jsonb, p_as_of timestamp with time zone, p_include_superseded boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION retrieve(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_fusion jsonb, p_as_of timestamp with time zone, p_include_superseded boolean); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.retrieve(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_fusion jsonb, p_as_of timestamp with time zone, p_include_superseded boolean) IS 'Hybrid retrieval of a query text from SQL: api.retrieve_candidates with the newest stored query vector of that text you may read (traces keep them), else BM25 only with a notice.';


--
-- Name: retrieve_candidates(text, text, jsonb, text, text, text, integer, integer, integer, jsonb, text, text[], timestamp with time zone, timestamp with time zone, text, timestamp with time zone, boolean); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.retrieve_candidates(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_k_lexical integer DEFAULT 100, p_k_dense integer DEFAULT 100, p_rrf_k integer DEFAULT 60, p_fusion jsonb DEFAULT '{"method": "weighted", "dense_weight": 0.5, "lexical_weight": {"code": 0.2}}'::jsonb, p_path_prefix text DEFAULT NULL::text, p_kinds text[] DEFAULT NULL::text[], p_updated_since timestamp with time zone DEFAULT NULL::timestamp with time zone, p_updated_until timestamp with time zone DEFAULT NULL::timestamp with time zone, p_negatives text DEFAULT 'include'::text, p_as_of timestamp with time zone DEFAULT NULL::timestamp with time zone, p_include_superseded boolean DEFAULT false) RETURNS TABLE(fragment_id bigint, lexical_rank integer, lexical_score double precision, dense_rank integer, dense_similarity double precision, fused_score double precision, doc_id bigint, doc_version integer, path text, anchor text, repo_id text, namespace text, kind text, owner text, heading_path text[], symbol text, text text, token_count integer, chunker_version text, embedding_model text, updated_at timestamp with time zone, lexical_norm double precision, dense_norm double precision, lexical_weight double precision, dense_weight double precision, negative boolean, pin_id bigint, pin_rank integer, persona_similarity double precision, authority double precision, authority_refreshed_at timestamp with time zone, valid_from timestamp with time zone, valid_until timestamp with time zone, reading bytea, profile jsonb)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    weighted constant boolean := p_fusion ->> 'method' = 'weighted';
    lexical_on constant boolean := p_k_lexical > 0;
    dense_on constant boolean := p_k_dense > 0;
    m record;
    -- The lexical top k, best first (BM25).
    bm25_ids bigint[] := '{}';
    bm25_scores float8[] := '{}';
    lexical_ids bigint[] := '{}';
    -- Dense hits of every namespace (rank within its namespace), and the cosine of the
    -- lexical candidates with their namespace's model (to complete weighted fusion).
    dense_ids bigint[] := '{}';
    dense_sims float8[] := '{}';
    dense_ranks int[] := '{}';
    hit_ids bigint[];
    hit_sims float8[];
    candidate_ids bigint[];
    bm25_fill_ids bigint[] := '{}';
    bm25_fill_scores float8[] := '{}';
    fill_ids bigint[] := '{}';
    fill_sims float8[] := '{}';
    -- Fragments with a live exact source under p_path_prefix (null: no path filter).
    path_ids bigint[];
    -- Negative fragments: null keeps both, true only them, false none of them.
    negative_filter boolean;
    -- Pinned fragments visible to the request, earliest pin first, and their pins.
    pinned_ids bigint[] := '{}';
    pin_ids bigint[] := '{}';
    -- The ranking profile in effect, and each candidate's cosine to the persona's centroid.
    profile jsonb;
    persona_ids bigint[] := '{}';
    persona_sims float8[] := '{}';
    evidence_ids bigint[];
    centroid extensions.vector;
    described extensions.vector;
    -- Fragments whose authority is read: none when the profile does not weigh it.
    authority_ids bigint[] := '{}';
    -- Keep fragments current at this time (null: any window): see below.
    valid_at timestamptz;
begin
    -- The requested scope must lie within the caller's grants (42501 otherwise);
    -- row-level security then keeps every other fragment out of every list below.
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform data._require_org(p_org_id);
    perform data._require_scope(p_org_id, p_repo_id, p_persona_id);
    if p_query is null or btrim(p_query) = '' then
        raise exception 'query must not be empty' using errcode = '22023';
    end if;
    if p_k_lexical not between 0 and 1000 or p_k_dense not between 0 and 1000 then
        raise exception 'k_lexical and k_dense must be between 0 and 1000' using errcode = '22023';
    end if;
    if p_rrf_k < 1 then
        raise exception 'rrf_k must be positive' using errcode = '22023';
    end if;
    perform data._check_fusion(p_fusion);
    if p_negatives is null or p_negatives not in ('include', 'only', 'exclude') then
        raise exception 'negatives must be include, only or exclude' using errcode = '22023';
    end if;
    negative_filter := case p_negatives when 'only' then true when 'exclude' then false end;
    if p_include_superseded is null then
        raise exception 'include_superseded must be true or false' using errcode = '22023';
    end if;
    -- Supersession and validity windows (sql/functions/48_validity.sql): only fragments
    -- current at p_as_of (now by default), unless superseded ones are asked for. An org
    -- without any window skips the test (an index probe), so its plans stay as they were.
    if not p_include_superseded and exists (
        select 1 from data.fragments f
        where f.org_id = p_org_id and (f.valid_from is not null or f.valid_until is not null)) then
        valid_at := coalesce(p_as_of, statement_timestamp());
    end if;
    profile := data._ranking_profile(p_org_id, p_persona_id);
    if p_path_prefix is not null then
        select coalesce(array_agg(distinct s.fragment_id), '{}') into path_ids
        from data.fragment_sources s
        join data.documents d on d.doc_id = s.doc_id
        join data.fragments f on f.fragment_id = s.fragment_id and f.org_id = s.org_id
        where s.org_id = p_org_id and s.retired_at is null and s.content_hash = f.content_hash
          and d.org_id = p_org_id and starts_with(d.path, p_path_prefix);
        if cardinality(path_ids) = 0 then
            return;  -- nothing under that path: no index scan needed
        end if;
    end if;

    if lexical_on then
        -- The exact BM25 top k after the filters the dense side applies too (kinds, dates,
        -- negative, validity), common terms pruned (sql/functions/21_bm25_top.sql).
        select coalesce(array_agg(b.fragment_id order by b.ord), '{}'), coalesce(array_agg(b.score order by b.ord), '{}')
          into bm25_ids, bm25_scores
        from data._bm25_top(p_org_id, p_query, p_repo_id, p_persona_id, p_session_id, path_ids, p_k_lexical,
                            p_kinds, p_updated_since, p_updated_until, negative_filter, valid_at)
             with ordinality as b(fragment_id, score, ord);
        lexical_ids := bm25_ids;
    end if;

    if dense_on then
        for m in select * from data._query_vectors(p_query_embeddings) loop
            select coalesce(array_agg(h.fragment_id order by h.rank), '{}'),
                   coalesce(array_agg(h.similarity order by h.rank), '{}')
              into hit_ids, hit_sims
            from data._dense_hits(p_org_id, m.model_id, m.dims, m.query_vector, p_k_dense,
                                  p_repo_id, p_persona_id, p_session_id,
                                  path_ids, p_kinds, p_updated_since, p_updated_until, negative_filter,
                                  valid_at) h;
            dense_ids := dense_ids || hit_ids;
            dense_sims := dense_sims || hit_sims;
            dense_ranks := dense_ranks || array(select generate_series(1, cardinality(hit_ids)));
            if weighted and lexical_on then
                select fill_ids || coalesce(array_agg(e.fragment_id), '{}'),
                       fill_sims || coalesce(array_agg(1.0::float8 - (e.embedding <=> m.query_vector)), '{}')
                  into fill_ids, fill_sims
                from data.embeddings e
                where e.model_id = m.model_id and e.org_id = p_org_id and e.fragment_id = any (lexical_ids);
            end if;
        end loop;
        -- Only the first p_k_dense hits of all namespaces together are candidates (the
        -- `dense` list below keeps them in this order): with two namespaces about half of
        -- the hits are not, and their rows, sources, BM25 and authority need not be read.
        select coalesce(array_agg(d.id order by d.rank, d.similarity desc, d.id), '{}'),
               coalesce(array_agg(d.similarity order by d.rank, d.similarity desc, d.id), '{}'),
               coalesce(array_agg(d.rank order by d.rank, d.similarity desc, d.id), '{}')
          into dense_ids, dense_sims, dense_ranks
        from (select u.id, u.similarity, u.rank
              from unnest(dense_ids, dense_sims, dense_ranks) as u(id, similarity, rank)
              order by u.rank, u.similarity desc, u.id
              limit p_k_dense) d;
    end if;

    -- Pins the request sees: the pin's scope and its fragment's both within the requested
    -- scope (row-level security has already bounded both by the caller's grants).
    select coalesce(array_agg(p.fragment_id order by p.created_at, p.pin_id), '{}'),
           coalesce(array_agg(p.pin_id order by p.created_at, p.pin_id), '{}')
      into pinned_ids, pin_ids
    from (select distinct on (p.fragment_id) p.fragment_id, p.pin_id, p.created_at
          from data.pins p
          join data.fragments f on f.fragment_id = p.fragment_id and f.org_id = p.org_id
          where p.org_id = p_org_id and f.org_id = p_org_id and f.active
            and (p.expires_at is null or p.expires_at > statement_timestamp())
            and data._in_scope(p.repo_id, p.persona_id, p.session_id, p_repo_id, p_persona_id, p_session_id)
            and data._in_scope(f.repo_id, f.persona_id, f.session_id, p_repo_id, p_persona_id, p_session_id)
            and (path_ids is null or f.fragment_id = any (path_ids))
            and (p_kinds is null or f.kind = any (p_kinds))
            and (p_updated_since is null or f.updated_at >= p_updated_since)
            and (p_updated_until is null or f.updated_at < p_updated_until)
            and (negative_filter is null or f.negative = negative_filter)
            and (valid_at is null
                 or ((f.valid_from is null or f.valid_from <= valid_at)
                     and (f.valid_until is null or f.valid_until > valid_at)))
          order by p.fragment_id, p.created_at, p.pin_id) p;

    candidate_ids := lexical_ids || dense_ids;
    if (profile ->> 'w_authority')::float8 > 0 then
        authority_ids := candidate_ids || pinned_ids;
    end if;
    -- Persona evidence (docs/adr/0014): what the persona cares about, per model, from
    -- two sources: the description of its profile (embedded when it was set,
    -- data.persona_vectors) and the centroid of its own fragments (the 1000 most
    -- recently updated). With both, their unit vectors count equally (the sum of the two,
    -- whose cosine to a fragment is the mean of the two cosines up to one factor per
    -- persona); with one, that one. Each candidate gets its cosine to it, floored at 0.
    -- Only when the profile weighs it.
    if p_persona_id is not null and (profile ->> 'w_persona')::float8 > 0 then
        select coalesce(array_agg(f.fragment_id), '{}') into evidence_ids
        from (select f.fragment_id from data.fragments f
              where f.org_id = p_org_id and f.persona_id = p_persona_id and f.active
              order by f.updated_at desc, f.fragment_id desc
              limit 1000) f;
        for m in select em.model_id from data._serving_models() em order by em.model_id loop
            -- Two id-list probes, as the lexical fill above (a join lets a stale estimate
            -- pick a nested loop over the whole model's vectors).
            centroid := null;
            if cardinality(evidence_ids) > 0 then
                select avg(e.embedding) into centroid
                from data.embeddings e
                where e.model_id = m.model_id and e.org_id = p_org_id and e.fragment_id = any (evidence_ids);
            end if;
            select v.embedding into described
            from data.persona_vectors v
            where v.org_id = p_org_id and v.persona_id = p_persona_id and v.model_id = m.model_id;
            centroid := case when centroid is null then described
                             when described is null then centroid
                             else l2_normalize(described) + l2_normalize(centroid) end;
            continue when centroid is null;
            select persona_ids || coalesce(array_agg(e.fragment_id), '{}'),
                   persona_sims || coalesce(array_agg(greatest(0.0::float8, 1.0::float8 - (e.embedding <=> centroid))), '{}')
              into persona_ids, persona_sims
            from data.embeddings e
            where e.model_id = m.model_id and e.org_id = p_org_id and e.fragment_id = any (candidate_ids || pinned_ids);
        end loop;
    end if;
    if weighted and lexical_on and dense_on then
        -- The BM25 of dense hits outside the lexical top k (absent: no query term, 0).
        select coalesce(array_agg(l.fragment_id), '{}'), coalesce(array_agg(l.score), '{}')
          into bm25_fill_ids, bm25_fill_scores
        from data._bm25_scores(p_org_id, p_query, p_repo_id, p_persona_id, p_session_id,
                               array(select d.id from unnest(dense_ids) as d(id) where d.id <> all (lexical_ids)),
                               1.2, 0.75) l;
    end if;

    return query
    with lexical as (
        select l.id as fragment_id, l.score, l.rank::int as rank
        from unnest(bm25_ids, bm25_scores) with ordinality as l(id, score, rank)
    ), dense as (
        select d.id as fragment_id, d.similarity,
               (row_number() over (order by d.rank, d.similarity desc, d.id))::int as rank
        from unnest(dense_ids, dense_sims, dense_ranks) as d(id, similarity, rank)
        order by rank
        limit p_k_dense
    ), pooled as (
        select coalesce(l.fragment_id, d.fragment_id) as fragment_id,
               l.rank as lexical_rank, l.score as lexical_score, d.rank as dense_rank, d.similarity
        from lexical l full join dense d on d.fragment_id = l.fragment_id
    ), candidate_rows as materialized (
        -- One scan probing the index once per id (joined per candidate instead, a
        -- nested loop would re-sort the id list for every probe).
        select f.fragment_id, f.namespace, f.repo_id, f.kind, f.owner, f.heading_path, f.symbol, f.text,
               f.token_count, f.chunker_version, f.updated_at, f.content_hash, f.negative,
               f.valid_from, f.valid_until, f.reading
        from data.fragments f
        where f.org_id = p_org_id and f.fragment_id = any (candidate_ids || pinned_ids)
    ), completed as materialized (
        -- Weighted fusion scores each candidate on both sides: a dense hit matching no
        -- query term has BM25 0; a lexical hit's cosine comes from its namespace's model.
        select p.fragment_id, p.lexical_rank, p.dense_rank, f.namespace, em.name as model,
               em.name || '@' || em.generation as model_label,
               case when lexical_on and weighted
                    then coalesce(p.lexical_score, lf.score, 0.0) else p.lexical_score end as lexical_score,
               coalesce(p.similarity, df.similarity) as dense_similarity,
               f.repo_id, f.kind, f.owner, f.heading_path, f.symbol, f.text, f.token_count,
               f.chunker_version, f.updated_at, f.content_hash, f.negative, f.valid_from, f.valid_until, f.reading
        from pooled p
        join candidate_rows f on f.fragment_id = p.fragment_id
        left join data._serving_models() em on em.namespace = f.namespace
        left join unnest(bm25_fill_ids, bm25_fill_scores) as lf(fragment_id, score) on lf.fragment_id = p.fragment_id
        left join unnest(fill_ids, fill_sims) as df(fragment_id, similarity) on df.fragment_id = p.fragment_id
    ), fused as (
        select fx.* from data._fuse(
            array(select c.fragment_id from completed c), array(select c.lexical_rank from completed c),
            array(select c.lexical_score from completed c), array(select c.dense_rank from completed c),
            array(select c.dense_similarity from completed c), array(select c.namespace from completed c),
            array(select c.model from completed c), lexical_on, dense_on, p_fusion, p_rrf_k) fx
    ), cited as (
        -- Cite a live source holding exactly this text (near-duplicates point here too).
        select distinct on (s.fragment_id) s.fragment_id, s.doc_id, s.doc_version, d.path, s.anchor
        from (select s.* from data.fragment_sources s
              where s.fragment_id = any (candidate_ids || pinned_ids) and s.retired_at is null offset 0) s
        join candidate_rows f on f.fragment_id = s.fragment_id
        join data.documents d on d.doc_id = s.doc_id
        order by s.fragment_id, s.content_hash = f.content_hash desc,
                 (p_path_prefix is null or starts_with(d.path, p_path_prefix)) desc,
                 s.created_at desc, s.doc_id, s.ordinal
    ), pinned as (
        select pn.fragment_id, pn.pin_id, pn.pin_rank::int as pin_rank
        from unnest(pinned_ids, pin_ids) with ordinality as pn(fragment_id, pin_id, pin_rank)
    ), authority as materialized (
        -- Citation authority (sql/functions/47_authority.sql), read through its definer helper.
        select au.fragment_id, au.authority, au.refreshed_at
        from data._authority(p_org_id, authority_ids) au
        where cardinality(authority_ids) > 0
    )
    -- The profile rides on the first row only (parsed once, not once per candidate).
    select r.*, case when row_number() over (order by r.fused_score desc, r.lexical_rank nulls last,
                                                      r.dense_rank nulls last, r.pin_rank nulls last,
                                                      r.fragment_id) = 1 then profile end
    from (
        select fu.fragment_id, fu.lexical_rank, fu.lexical_score, fu.dense_rank, fu.dense_similarity,
               fu.fused_score, src.doc_id, src.doc_version, src.path, src.anchor, c.repo_id,
               c.namespace, c.kind, c.owner, c.heading_path, c.symbol, c.text,
               c.token_count, c.chunker_version, c.model_label, c.updated_at,
               fu.lexical_norm, fu.dense_norm, fu.lexical_weight, fu.dense_weight,
               c.negative, pn.pin_id, pn.pin_rank, ps.similarity as persona_similarity, au.authority, au.refreshed_at,
               c.valid_from, c.valid_until, c.reading
        from fused fu
        join completed c on c.fragment_id = fu.fragment_id
        left join cited src on src.fragment_id = fu.fragment_id
        left join pinned pn on pn.fragment_id = fu.fragment_id
        left join unnest(persona_ids, persona_sims) as ps(fragment_id, similarity) on ps.fragment_id = fu.fragment_id
        left join authority au on au.fragment_id = fu.fragment_id
        union all
        -- Pins outside both candidate lists: no ranks, no scores, after every candidate.
        select pn.fragment_id, null, null, null, null, 0.0::float8, src.doc_id, src.doc_version, src.path,
               src.anchor, f.repo_id, f.namespace, f.kind, f.owner, f.heading_path, f.symbol, f.text,
               f.token_count, f.chunker_version, em.name || '@' || em.generation, f.updated_at,
               null, null, null, null, f.negative, pn.pin_id, pn.pin_rank, ps.similarity, au.authority, au.refreshed_at,
               f.valid_from, f.valid_until, f.reading
        from pinned pn
        join candidate_rows f on f.fragment_id = pn.fragment_id
        left join data._serving_models() em on em.namespace = f.namespace
        left join cited src on src.fragment_id = pn.fragment_id
        left join unnest(persona_ids, persona_sims) as ps(fragment_id, similarity) on ps.fragment_id = pn.fragment_id
        left join authority au on au.fragment_id = pn.fragment_id
        where not pn.fragment_id = any (candidate_ids)
    ) r
    order by r.fused_score desc, r.lexical_rank nulls last, r.dense_rank nulls last, r.pin_rank nulls last,
             r.fragment_id;
end
$$;


ALTER FUNCTION api.retrieve_candidates(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_rrf_k integer, p_fusion jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_include_superseded boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION retrieve_candidates(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_rrf_k integer, p_fusion jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_include_superseded boolean); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.retrieve_candidates(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_rrf_k integer, p_fusion jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_include_superseded boolean) IS 'Lexical and dense top-k fused (weighted calibrated scores by default, or RRF), with ranks, scores and citation data per candidate, the pins the request sees (pin_id, pin_rank), each candidate''s similarity to the persona, its citation authority (0 to 1, with the time of the last refresh) and the ranking profile in effect (first row); optional path prefix, kinds, updated-at window and negatives filters; only fragments current at p_as_of (now by default) unless p_include_superseded, each with its validity window and its reading for the learned reranker (null: none stored).';


--
-- Name: revoke_analyst(text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.revoke_analyst(p_org_id text, p_principal_id text) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    login text := api.disable_principal(p_org_id, p_principal_id);
    grp text;
begin
    if login is null then
        raise exception 'principal % of org % has no login', p_principal_id, p_org_id using errcode = 'P0002';
    end if;
    perform data._require_rls_login(login);
    if exists (select 1 from pg_roles r where r.rolname = login) then
        execute format('alter role %I nologin password null', login);
        foreach grp in array array['contexts_analyst', 'contexts_auditor'] loop
            if exists (select 1 from pg_auth_members m
                       join pg_roles g on g.oid = m.roleid join pg_roles r on r.oid = m.member
                       where g.rolname = grp and r.rolname = login) then
                execute format('revoke %I from %I', grp, login);
            end if;
        end loop;
        begin
            perform pg_terminate_backend(a.pid) from pg_stat_activity a where a.usename = login;
        exception when insufficient_privilege then
            raise notice 'open sessions of % go on until they end (% may not end them)', login, current_user;
        end;
    end if;
    return login;
end
$$;


ALTER FUNCTION api.revoke_analyst(p_org_id text, p_principal_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION revoke_analyst(p_org_id text, p_principal_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.revoke_analyst(p_org_id text, p_principal_id text) IS 'End a login''s access (NOLOGIN, sessions ended) and disable its principal; history is kept.';


--
-- Name: revoke_api_key(text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.revoke_api_key(p_key_id text) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    with revoked as (
        update data.api_keys k set revoked_at = now() where k.key_id = p_key_id and k.revoked_at is null
        returning 1
    )
    select exists (select 1 from revoked)
$$;


ALTER FUNCTION api.revoke_api_key(p_key_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION revoke_api_key(p_key_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.revoke_api_key(p_key_id text) IS 'Revoke a key for good; false when unknown or already revoked.';


--
-- Name: revoke_scope(text, text, text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.revoke_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text DEFAULT NULL::text) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    with gone as (
        delete from data.grants g
        where g.org_id = p_org_id and g.principal_id = p_principal_id and g.scope_kind = p_scope_kind
          and g.scope_id = data._grant_target(p_org_id, p_scope_kind, p_scope_id)
        returning 1
    )
    select exists (select 1 from gone)
$$;


ALTER FUNCTION api.revoke_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION revoke_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.revoke_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text) IS 'Revoke one grant; false when there was none.';


--
-- Name: rule_create(text, text, text, text, text[], text[], timestamp with time zone, boolean); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.rule_create(p_org_id text, p_repo_id text, p_name text, p_context_ref text, p_path_globs text[] DEFAULT '{}'::text[], p_symbol_globs text[] DEFAULT '{}'::text[], p_expires_at timestamp with time zone DEFAULT NULL::timestamp with time zone, p_enabled boolean DEFAULT true) RETURNS TABLE(rule_id bigint, org_id text, repo_id text, name text, path_globs text[], symbol_globs text[], context_ref text, created_by text, created_at timestamp with time zone, expires_at timestamp with time zone, enabled boolean, expired boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $_$
declare
    me record;
    parts text[];
    ctx_id bigint;
    pinned int;
    resolved record;
    ctx data.contexts;
    in_scope boolean;
    id bigint;
begin
    select * into me from data._principal_or_raise();
    perform data._require_write(p_org_id, p_repo_id, null, null);
    perform data._require_scope(p_org_id, p_repo_id, null);
    if p_name is null or p_name !~ '^[A-Za-z0-9][A-Za-z0-9_.:/ -]{0,127}$' then
        raise exception 'a rule name is 1 to 128 letters, digits, spaces and _.:/- (starting with a letter or digit)'
            using errcode = '22023';
    end if;
    perform data._check_rule_globs(p_path_globs, p_symbol_globs);
    -- The caller may read it (P0002 otherwise, 22023 malformed).
    select * into resolved from data._resolve_context_refs(array[p_context_ref]);
    if resolved.retired then
        raise exception 'context % is retired', p_context_ref using errcode = '55000';
    end if;
    parts := regexp_match(p_context_ref, '@([0-9]+|latest)$');
    pinned := case when parts[1] = 'latest' then null else parts[1]::int end;
    ctx_id := resolved.context_id;
    select c.* into ctx from data.contexts c where c.context_id = ctx_id;
    -- ... and so does every reader of the rule's scope.
    in_scope := (ctx.org_id = p_org_id and ctx.persona_id is null and ctx.session_id is null
                 and (ctx.repo_id is null or ctx.repo_id is not distinct from p_repo_id))
        or exists (
            select 1 from data.context_subscriptions s
            where s.context_id = ctx_id and s.revoked_at is null and s.subscriber_org_id = p_org_id
              and (s.subscriber_repo_id is null or s.subscriber_repo_id is not distinct from p_repo_id)
              and (pinned is null or s.version = pinned
                   or (s.version is null and pinned = (select max(v.version) from data.context_versions v
                                                       where v.context_id = ctx_id))));
    if not in_scope then
        raise exception 'context % is not readable by everyone who reads the rule''s scope', p_context_ref
            using errcode = '22023',
            hint = 'A rule names a Context of its own scope (or one above it), or one its org or repo subscribes to.';
    end if;
    insert into data.context_rules (org_id, repo_id, name, path_globs, symbol_globs, context_id, context_org_id,
                                    version, created_by, expires_at, enabled)
    values (p_org_id, p_repo_id, p_name, coalesce(p_path_globs, '{}'), coalesce(p_symbol_globs, '{}'), ctx_id,
            ctx.org_id, pinned, me.principal_id, p_expires_at, coalesce(p_enabled, true))
    returning data.context_rules.rule_id into id;
    return query select * from data._rule_rows(array[id]);
end
$_$;


ALTER FUNCTION api.rule_create(p_org_id text, p_repo_id text, p_name text, p_context_ref text, p_path_globs text[], p_symbol_globs text[], p_expires_at timestamp with time zone, p_enabled boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION rule_create(p_org_id text, p_repo_id text, p_name text, p_context_ref text, p_path_globs text[], p_symbol_globs text[], p_expires_at timestamp with time zone, p_enabled boolean); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.rule_create(p_org_id text, p_repo_id text, p_name text, p_context_ref text, p_path_globs text[], p_symbol_globs text[], p_expires_at timestamp with time zone, p_enabled boolean) IS 'Create a workflow rule: path or symbol globs that bring a Context version into retrievals naming touched files (write grant on the rule''s scope).';


--
-- Name: rule_delete(bigint); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.rule_delete(p_rule_id bigint) RETURNS TABLE(rule_id bigint, org_id text, repo_id text, name text, path_globs text[], symbol_globs text[], context_ref text, created_by text, created_at timestamp with time zone, expires_at timestamp with time zone, enabled boolean, expired boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    me record;
    rule data.context_rules;
begin
    select * into me from data._principal_or_raise();
    select r.* into rule from data.context_rules r
    where r.rule_id = p_rule_id and r.org_id = me.org_id
      and (r.repo_id is null or data.acl_org_wide() or r.repo_id = any (data.acl_repos()));
    if rule.rule_id is null then
        raise exception 'unknown rule: %', p_rule_id using errcode = 'P0002';
    end if;
    perform data._require_write(rule.org_id, rule.repo_id, null, null);
    return query select * from data._rule_rows(array[rule.rule_id]);
    delete from data.context_rules r where r.rule_id = rule.rule_id;
end
$$;


ALTER FUNCTION api.rule_delete(p_rule_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION rule_delete(p_rule_id bigint); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.rule_delete(p_rule_id bigint) IS 'Delete a workflow rule (write grant on its scope).';


--
-- Name: rule_matches(text, text, text[]); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.rule_matches(p_org_id text, p_repo_id text, p_touching text[]) RETURNS TABLE(rule_id bigint, name text, ref text)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    with touched as (
        select split_part(t, '#', 1) as path,
               case when strpos(t, '#') > 0 then substr(t, strpos(t, '#') + 1) end as symbol
        from unnest(p_touching) t
        where t is not null
    ), matched as (
        select r.* from data.context_rules r
        where r.org_id = p_org_id and (r.repo_id is null or r.repo_id is not distinct from p_repo_id)
          and r.enabled and (r.expires_at is null or r.expires_at > clock_timestamp())
          and exists (
              select 1 from touched t
              where exists (select 1 from unnest(r.path_globs) g where t.path ~ data._glob_regex(g))
                 or (t.symbol is not null
                     and exists (select 1 from unnest(r.symbol_globs) g where t.symbol ~ data._glob_regex(g))))
    )
    select m.rule_id, m.name, 'ctx_' || m.context_id || '@' || v.version
    from matched m
    join data.contexts c on c.context_id = m.context_id and c.retired_at is null
    cross join lateral (select max(rv.version) as version from data._context_versions(true, p_repo_id) rv
                        where rv.context_id = m.context_id and (m.version is null or rv.version = m.version)) v
    where v.version is not null
    order by m.rule_id
$$;


ALTER FUNCTION api.rule_matches(p_org_id text, p_repo_id text, p_touching text[]) OWNER TO <migrator>;

--
-- Name: FUNCTION rule_matches(p_org_id text, p_repo_id text, p_touching text[]); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.rule_matches(p_org_id text, p_repo_id text, p_touching text[]) IS 'Workflow rules of a scope matching touched paths or symbols, with the Context version each brings that the caller may read (others left out, unsaid).';


--
-- Name: rules_list(text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.rules_list(p_org_id text, p_repo_id text DEFAULT NULL::text) RETURNS TABLE(rule_id bigint, org_id text, repo_id text, name text, path_globs text[], symbol_globs text[], context_ref text, created_by text, created_at timestamp with time zone, expires_at timestamp with time zone, enabled boolean, expired boolean)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    perform data._require_read(p_org_id, p_repo_id, null, null);
    perform data._require_scope(p_org_id, p_repo_id, null);
    return query select * from data._rule_rows(array(
        select r.rule_id from data.context_rules r
        where r.org_id = p_org_id and (r.repo_id is null or r.repo_id is not distinct from p_repo_id)));
end
$$;


ALTER FUNCTION api.rules_list(p_org_id text, p_repo_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION rules_list(p_org_id text, p_repo_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.rules_list(p_org_id text, p_repo_id text) IS 'Workflow rules a retrieval in this scope consults (the org''s and the repo''s), as row-level security shows them.';


--
-- Name: score_dense(text, jsonb, bigint[]); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.score_dense(p_org_id text, p_query_embeddings jsonb, p_fragment_ids bigint[]) RETURNS TABLE(fragment_id bigint, similarity double precision)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    perform data._require_read(p_org_id, null, null, null);
    if jsonb_typeof(p_query_embeddings) is distinct from 'object' then
        return;
    end if;
    return query
    with query_vectors as materialized (
        -- Each namespace's vector is parsed once, not once per fragment.
        select em.model_id, em.namespace, (p_query_embeddings -> em.namespace)::text::vector as v
        from data.embedding_models em
        where em.status = 'active' and p_query_embeddings ? em.namespace
          and jsonb_typeof(p_query_embeddings -> em.namespace) = 'array'
          and jsonb_array_length(p_query_embeddings -> em.namespace) = em.dims
    )
    select e.fragment_id, 1.0::float8 - (e.embedding <=> q.v)
    from query_vectors q
    join data.fragments f on f.org_id = p_org_id and f.namespace = q.namespace and f.fragment_id = any (p_fragment_ids)
    join data.embeddings e on e.org_id = p_org_id and e.fragment_id = f.fragment_id and e.model_id = q.model_id;
end
$$;


ALTER FUNCTION api.score_dense(p_org_id text, p_query_embeddings jsonb, p_fragment_ids bigint[]) OWNER TO <migrator>;

--
-- Name: FUNCTION score_dense(p_org_id text, p_query_embeddings jsonb, p_fragment_ids bigint[]); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.score_dense(p_org_id text, p_query_embeddings jsonb, p_fragment_ids bigint[]) IS 'Cosine similarity of given fragments to the query vector of their namespace (active model).';


--
-- Name: score_lexical(text, text, bigint[], text, text, text, double precision, double precision); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.score_lexical(p_org_id text, p_query text, p_fragment_ids bigint[], p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_k1 double precision DEFAULT 1.2, p_b double precision DEFAULT 0.75) RETURNS TABLE(fragment_id bigint, score double precision)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    return query
    select s.fragment_id, s.score
    from data._bm25_scores(p_org_id, p_query, p_repo_id, p_persona_id, p_session_id, p_fragment_ids, p_k1, p_b) s;
end
$$;


ALTER FUNCTION api.score_lexical(p_org_id text, p_query text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) OWNER TO <migrator>;

--
-- Name: FUNCTION score_lexical(p_org_id text, p_query text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.score_lexical(p_org_id text, p_query text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) IS 'BM25 (k1=1.2, b=0.75) of given fragments for a query, with api.search_lexical''s statistics; no matching term: absent.';


--
-- Name: search_dense(text, jsonb, integer, text, text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.search_dense(p_org_id text, p_query_embeddings jsonb, p_k integer DEFAULT 100, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text) RETURNS TABLE(fragment_id bigint, namespace text, model_id integer, similarity double precision, rank integer)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    m record;
begin
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    for m in select * from data._query_vectors(p_query_embeddings) loop
        return query
        select h.fragment_id, m.namespace, m.model_id, h.similarity, h.rank
        from data._dense_hits(p_org_id, m.model_id, m.dims, m.query_vector, p_k,
                              p_repo_id, p_persona_id, p_session_id) h
        order by h.rank;
    end loop;
end
$$;


ALTER FUNCTION api.search_dense(p_org_id text, p_query_embeddings jsonb, p_k integer, p_repo_id text, p_persona_id text, p_session_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION search_dense(p_org_id text, p_query_embeddings jsonb, p_k integer, p_repo_id text, p_persona_id text, p_session_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.search_dense(p_org_id text, p_query_embeddings jsonb, p_k integer, p_repo_id text, p_persona_id text, p_session_id text) IS 'Cosine top-k per namespace with that namespace''s active model (HNSW, iterative scan).';


--
-- Name: search_lexical(text, text, integer, text, text, text, double precision, double precision); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.search_lexical(p_org_id text, p_query text, p_k integer DEFAULT 100, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_k1 double precision DEFAULT 1.2, p_b double precision DEFAULT 0.75) RETURNS TABLE(fragment_id bigint, score double precision, rank integer)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    if p_k is null or p_k < 0 then
        raise exception 'k must be zero or more' using errcode = '22023';
    end if;
    return query
    select s.fragment_id, s.score, s.rank::int
    from data._bm25_top(p_org_id, p_query, p_repo_id, p_persona_id, p_session_id, null, p_k,
                        p_k1 => p_k1, p_b => p_b) with ordinality as s(fragment_id, score, rank)
    order by s.rank;
end
$$;


ALTER FUNCTION api.search_lexical(p_org_id text, p_query text, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) OWNER TO <migrator>;

--
-- Name: FUNCTION search_lexical(p_org_id text, p_query text, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.search_lexical(p_org_id text, p_query text, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) IS 'BM25 top-k (k1=1.2, b=0.75) over the fragments in scope, from the statistics of the scope groups the caller may read.';


--
-- Name: secondary_models(); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.secondary_models() RETURNS TABLE(model_id integer, namespace text, name text, source text, dims integer, generation integer, status text)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    select em.model_id, em.namespace, em.name, coalesce(em.source, em.name), em.dims, em.generation, em.status
    from data.embedding_models em
    where em.status <> 'active' and em.dropped_at is null
    order by em.namespace, em.generation
$$;


ALTER FUNCTION api.secondary_models() OWNER TO <migrator>;

--
-- Name: FUNCTION secondary_models(); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.secondary_models() IS 'Shadow and not yet dropped retired generations: ingestion writes their vectors too.';


--
-- Name: serving_models(); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.serving_models() RETURNS TABLE(model_id integer, namespace text, name text, source text, dims integer, generation integer)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    select em.model_id, em.namespace, em.name, coalesce(em.source, em.name), em.dims, em.generation
    from data.embedding_models em
    where em.status = 'active'
    order by em.namespace
$$;


ALTER FUNCTION api.serving_models() OWNER TO <migrator>;

--
-- Name: FUNCTION serving_models(); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.serving_models() IS 'Per namespace, the active generation and what loads its model: what a service follows.';


--
-- Name: set_login_password(text, text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.set_login_password(p_org_id text, p_principal_id text, p_verifier text) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    login text;
begin
    perform data._require_principal(p_org_id, p_principal_id);
    perform data._require_scram(p_verifier);
    select p.db_role into login from data.principals p where p.org_id = p_org_id and p.principal_id = p_principal_id;
    if exists (select 1 from data.principals p
               where p.org_id = p_org_id and p.principal_id = p_principal_id and p.disabled_at is not null) then
        raise exception 'principal % of org % is disabled (its access was revoked)', p_principal_id, p_org_id
            using errcode = '55000', hint = 'Give access again with a new analyst: `contexts analyst create`.';
    end if;
    if login is null then
        raise exception 'principal % of org % has no login', p_principal_id, p_org_id using errcode = 'P0002';
    end if;
    perform data._require_rls_login(login);
    execute format('alter role %I password %L', login, p_verifier);
    return login;
end
$$;


ALTER FUNCTION api.set_login_password(p_org_id text, p_principal_id text, p_verifier text) OWNER TO <migrator>;

--
-- Name: FUNCTION set_login_password(p_org_id text, p_principal_id text, p_verifier text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.set_login_password(p_org_id text, p_principal_id text, p_verifier text) IS 'Set a new password (as its SCRAM-SHA-256 verifier) on a principal''s login.';


--
-- Name: set_readings(bigint[], text[], bytea[]); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.set_readings(p_fragment_ids bigint[], p_org_ids text[], p_readings bytea[]) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    written int;
begin
    if cardinality(p_fragment_ids) is distinct from cardinality(p_readings)
       or cardinality(p_fragment_ids) is distinct from cardinality(p_org_ids) then
        raise exception 'one org and one reading per fragment are needed' using errcode = '22023';
    end if;
    update data.fragments f set reading = r.reading
    from unnest(p_fragment_ids, p_org_ids, p_readings) as r(fragment_id, org_id, reading)
    where f.fragment_id = r.fragment_id and f.org_id = r.org_id and f.reading is distinct from r.reading;
    get diagnostics written = row_count;
    return written;
end
$$;


ALTER FUNCTION api.set_readings(p_fragment_ids bigint[], p_org_ids text[], p_readings bytea[]) OWNER TO <migrator>;

--
-- Name: FUNCTION set_readings(p_fragment_ids bigint[], p_org_ids text[], p_readings bytea[]); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.set_readings(p_fragment_ids bigint[], p_org_ids text[], p_readings bytea[]) IS 'Write the learned-reranker readings of existing fragments (`contexts rerank readings`).';


--
-- Name: stale_fragments(text, text, integer, integer, integer, timestamp with time zone); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.stale_fragments(p_org_id text, p_owner text DEFAULT NULL::text, p_min_retrievals integer DEFAULT NULL::integer, p_window_days integer DEFAULT NULL::integer, p_stale_after_days integer DEFAULT NULL::integer, p_as_of timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(fragment_id bigint, org_id text, repo_id text, owner text, owner_source text, kind text, doc_id bigint, path text, anchor text, heading_path text[], retrievals integer, last_retrieved_at timestamp with time zone, last_edited_at timestamp with time zone, days_since_edit integer, window_days integer, min_retrievals integer, stale_after_days integer)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    perform data._require_read(p_org_id, null, null, null);
    if p_min_retrievals not between 1 and 1000000 or p_window_days not between 1 and 36500
       or p_stale_after_days not between 0 and 36500 then
        raise exception 'min retrievals: 1 to 1000000; window and age: days, up to 36500' using errcode = '22023';
    end if;
    return query
    select f.fragment_id, f.org_id, f.repo_id, f.owner, f.owner_source, f.kind,
           src.doc_id, src.path, src.anchor, f.heading_path, s.retrievals, s.last_retrieved_at, f.updated_at,
           (extract(epoch from coalesce(p_as_of, now()) - f.updated_at) / 86400)::int,
           s.window_days, s.min_retrievals, s.stale_after_days
    from data._stale_readable(p_org_id, coalesce(p_as_of, now()), p_window_days, p_min_retrievals,
                              p_stale_after_days) s
    join data.fragments f on f.org_id = p_org_id and f.fragment_id = s.fragment_id
    cross join lateral (
        select x.doc_id, d.path, x.anchor from data.fragment_sources x join data.documents d on d.doc_id = x.doc_id
        where x.org_id = p_org_id and x.fragment_id = f.fragment_id and x.retired_at is null
        order by x.content_hash = f.content_hash desc, x.created_at desc, x.doc_id, x.ordinal
        limit 1
    ) src
    where p_owner is null or f.owner = p_owner
    order by s.retrievals desc, f.updated_at, f.fragment_id;
end
$$;


ALTER FUNCTION api.stale_fragments(p_org_id text, p_owner text, p_min_retrievals integer, p_window_days integer, p_stale_after_days integer, p_as_of timestamp with time zone) OWNER TO <migrator>;

--
-- Name: FUNCTION stale_fragments(p_org_id text, p_owner text, p_min_retrievals integer, p_window_days integer, p_stale_after_days integer, p_as_of timestamp with time zone); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.stale_fragments(p_org_id text, p_owner text, p_min_retrievals integer, p_window_days integer, p_stale_after_days integer, p_as_of timestamp with time zone) IS 'Stale fragments you may read (often retrieved, text not edited for long; the org''s thresholds unless given), optionally of one owner, most retrieved first, with the document path, retrievals in the window, last edit and where the owner came from.';


--
-- Name: sync_documents(text, text, text[]); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.sync_documents(p_org_id text, p_repo_id text, p_paths text[] DEFAULT NULL::text[]) RETURNS TABLE(doc_id bigint, path text, version integer, commit_sha text)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    perform data._require_read(p_org_id, p_repo_id, null, null);
    perform data._require_org(p_org_id);
    perform data._require_scope(p_org_id, p_repo_id, null);
    return query
    select d.doc_id, d.path, d.current_version, v.metadata ->> 'git_commit'
    from data.documents d
    join data.document_versions v on v.doc_id = d.doc_id and v.version = d.current_version
    where d.org_id = p_org_id and d.repo_id = p_repo_id and d.persona_id is null and d.session_id is null
      and d.deleted_at is null
      and v.metadata ? 'git_commit'
      and (p_paths is null or d.path = any(p_paths))
    order by d.path;
end
$$;


ALTER FUNCTION api.sync_documents(p_org_id text, p_repo_id text, p_paths text[]) OWNER TO <migrator>;

--
-- Name: FUNCTION sync_documents(p_org_id text, p_repo_id text, p_paths text[]); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.sync_documents(p_org_id text, p_repo_id text, p_paths text[]) IS 'Live documents of a repo whose current version a git sync wrote (metadata git_commit), with that commit; optionally only these paths.';


--
-- Name: sync_record(text, text, text, text, text, integer, integer, boolean); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.sync_record(p_org_id text, p_repo_id text, p_commit_sha text, p_ref text, p_previous text, p_written integer DEFAULT 0, p_deleted integer DEFAULT 0, p_full_scan boolean DEFAULT false) RETURNS TABLE(org_id text, repo_id text, commit_sha text, ref text, synced_at timestamp with time zone, synced_by text, written integer, deleted integer, full_scan boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    me record;
    stored text;
    saved data.git_syncs;
begin
    select * into me from data._principal_or_raise();
    if p_repo_id is null then
        raise exception 'a sync needs a repo' using errcode = '22023';
    end if;
    perform data._require_write(p_org_id, p_repo_id, null, null);
    perform api.ensure_scope(p_org_id, p_repo_id);
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
    raise exception 'invalid sync record: %', sqlerrm using errcode = '22023';
end
$$;


ALTER FUNCTION api.sync_record(p_org_id text, p_repo_id text, p_commit_sha text, p_ref text, p_previous text, p_written integer, p_deleted integer, p_full_scan boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION sync_record(p_org_id text, p_repo_id text, p_commit_sha text, p_ref text, p_previous text, p_written integer, p_deleted integer, p_full_scan boolean); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.sync_record(p_org_id text, p_repo_id text, p_commit_sha text, p_ref text, p_previous text, p_written integer, p_deleted integer, p_full_scan boolean) IS 'Record the commit a repo''s documents were synced to (write grant on the repo); refused (40001) when another sync recorded a different commit since p_previous.';


--
-- Name: sync_state(text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.sync_state(p_org_id text, p_repo_id text) RETURNS TABLE(org_id text, repo_id text, commit_sha text, ref text, synced_at timestamp with time zone, synced_by text, written integer, deleted integer, full_scan boolean)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
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


ALTER FUNCTION api.sync_state(p_org_id text, p_repo_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION sync_state(p_org_id text, p_repo_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.sync_state(p_org_id text, p_repo_id text) IS 'The last git sync of a repo the caller may read: commit, branch, when, by whom, what it wrote and deleted; no row when never synced.';


--
-- Name: unchanged_documents(text, text, text, text, text[], text[]); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.unchanged_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_paths text[], p_hashes text[]) RETURNS TABLE(path text, doc_id bigint, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    perform data._require_write(p_org_id, p_repo_id, p_persona_id, p_session_id);
    if cardinality(p_paths) is distinct from cardinality(p_hashes) then
        raise exception 'unchanged_documents: % paths but % hashes', cardinality(p_paths), cardinality(p_hashes)
            using errcode = '22023';
    end if;
    return query
    select d.path, d.doc_id, d.current_version
    from unnest(p_paths, p_hashes) as w(path, content_hash)
    join data.documents d
      on d.org_id = p_org_id
     and coalesce(d.repo_id, '') = coalesce(p_repo_id, '')
     and coalesce(d.persona_id, '') = coalesce(p_persona_id, '')
     and coalesce(d.session_id, '') = coalesce(p_session_id, '')
     and d.path = w.path
     and d.deleted_at is null
    join data.document_versions v
      on v.doc_id = d.doc_id and v.version = d.current_version and v.content_hash = w.content_hash;
end
$$;


ALTER FUNCTION api.unchanged_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_paths text[], p_hashes text[]) OWNER TO <migrator>;

--
-- Name: FUNCTION unchanged_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_paths text[], p_hashes text[]); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.unchanged_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_paths text[], p_hashes text[]) IS 'Which of these (path, content hash) pairs the scope holds already as the current, live version (write grants required): they need no new version.';


--
-- Name: version_metadata(bigint[], integer[]); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.version_metadata(p_doc_ids bigint[], p_versions integer[]) RETURNS TABLE(doc_id bigint, version integer, metadata jsonb)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    select v.doc_id, v.version, v.metadata
    from data.document_versions v
    join unnest(p_doc_ids, p_versions) as w(doc_id, version) on w.doc_id = v.doc_id and w.version = v.version
$$;


ALTER FUNCTION api.version_metadata(p_doc_ids bigint[], p_versions integer[]) OWNER TO <migrator>;

--
-- Name: FUNCTION version_metadata(p_doc_ids bigint[], p_versions integer[]); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.version_metadata(p_doc_ids bigint[], p_versions integer[]) IS 'Metadata of readable document versions, as stored at ingestion.';


--
-- Name: webhook_delete(text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.webhook_delete(p_org_id text) RETURNS TABLE(org_id text, url text, has_secret boolean, enabled boolean, updated_by text, updated_at timestamp with time zone)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    perform data._require_write(p_org_id, null, null, null);
    return query delete from data.org_webhooks w where w.org_id = p_org_id
        returning w.org_id, w.url, w.secret is not null, w.enabled, w.updated_by, w.updated_at;
    if not found then
        raise exception 'org % has no webhook', p_org_id using errcode = 'P0002';
    end if;
end
$$;


ALTER FUNCTION api.webhook_delete(p_org_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION webhook_delete(p_org_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.webhook_delete(p_org_id text) IS 'Remove the org''s nudge webhook; needs an org write grant.';


--
-- Name: webhook_get(text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.webhook_get(p_org_id text) RETURNS TABLE(org_id text, url text, has_secret boolean, enabled boolean, updated_by text, updated_at timestamp with time zone)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    perform data._require_write(p_org_id, null, null, null);
    return query select w.org_id, w.url, w.secret is not null, w.enabled, w.updated_by, w.updated_at
    from data.org_webhooks w where w.org_id = p_org_id;
    if not found then
        raise exception 'org % has no webhook', p_org_id using errcode = 'P0002';
    end if;
end
$$;


ALTER FUNCTION api.webhook_get(p_org_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION webhook_get(p_org_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.webhook_get(p_org_id text) IS 'The org''s nudge webhook (URL, whether a secret is set, enabled), never the secret; needs an org write grant.';


--
-- Name: webhook_set(text, text, text, boolean); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.webhook_set(p_org_id text, p_url text, p_secret text DEFAULT NULL::text, p_enabled boolean DEFAULT true) RETURNS TABLE(org_id text, url text, has_secret boolean, enabled boolean, updated_by text, updated_at timestamp with time zone)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    me record;
begin
    perform data._require_write(p_org_id, null, null, null);
    select * into me from data._principal_or_raise();
    insert into data.org_webhooks as w (org_id, url, secret, enabled, updated_by)
    values (p_org_id, p_url, p_secret, coalesce(p_enabled, true), me.principal_id)
    on conflict on constraint org_webhooks_pkey do update
        set url = excluded.url, secret = coalesce(excluded.secret, w.secret), enabled = excluded.enabled,
            updated_by = excluded.updated_by, updated_at = now();
    return query select * from api.webhook_get(p_org_id);
exception when check_violation or not_null_violation then
    raise exception 'a webhook URL is http:// or https:// with a host and no credentials (at most 2048 characters); a secret has 16 to 256 characters'
        using errcode = '22023';
end
$$;


ALTER FUNCTION api.webhook_set(p_org_id text, p_url text, p_secret text, p_enabled boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION webhook_set(p_org_id text, p_url text, p_secret text, p_enabled boolean); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.webhook_set(p_org_id text, p_url text, p_secret text, p_enabled boolean) IS 'Set the org''s nudge webhook (http/https, no credentials in the URL) and its signing secret; needs an org write grant; the secret is never read back.';


--
-- Name: whoami(); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.whoami() RETURNS TABLE(org_id text, principal_id text, org_wide boolean, repos text[], personas text[], sessions text[], audit boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    select data.acl_org(), data.acl_principal(), data.acl_org_wide(), data.acl_repos(),
           data.acl_personas(), data.acl_sessions(), data.acl_audit()
$$;


ALTER FUNCTION api.whoami() OWNER TO <migrator>;

--
-- Name: FUNCTION whoami(); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.whoami() IS 'The principal this transaction acts for, and its read ACL.';


--
-- Name: _acl(text, boolean); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._acl(p_kind text, p_write boolean DEFAULT false) RETURNS text[]
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    select coalesce(array_agg(g.scope_id order by g.scope_id), '{}')
    from data.current_principal() me
    join data.grants g on g.org_id = me.org_id and g.principal_id = me.principal_id
    where g.scope_kind = p_kind
      and (g.can_write or not p_write)
      -- A session grant lasts as long as the session.
      and (p_kind <> 'session' or exists (
              select 1 from data.sessions s
              where s.org_id = g.org_id and s.session_id = g.scope_id
                and (s.expires_at is null or s.expires_at > statement_timestamp())))
$$;


ALTER FUNCTION data._acl(p_kind text, p_write boolean) OWNER TO <migrator>;

--
-- Name: _adopt_login(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._adopt_login(p_login text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    r pg_roles;
    mapped text;
begin
    select * into r from pg_roles where rolname = p_login;
    if not found then
        raise exception 'no such login: %', p_login using errcode = 'P0002';
    end if;
    perform data._require_rls_login(p_login);
    select p.org_id || '/' || p.principal_id into mapped from data.principals p where p.db_role = p_login;
    if mapped is not null then
        raise exception 'login % is already mapped to principal %', p_login, mapped using errcode = '23505';
    end if;
    if pg_has_role(r.oid, 'contexts_analyst', 'member') or pg_has_role(r.oid, 'contexts_auditor', 'member') then
        return false;
    end if;
    execute format('grant contexts_analyst to %I', p_login);
    return true;
end
$$;


ALTER FUNCTION data._adopt_login(p_login text) OWNER TO <migrator>;

--
-- Name: _analyze_new_tenant(text, integer); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._analyze_new_tenant(p_org_id text, p_min_rows integer DEFAULT 100) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    no int := (select o.org_no from data.orgs o where o.org_id = p_org_id);
    part regclass;
    big boolean;
    analyzed int := 0;
begin
    for part in
        select c.oid::regclass from pg_class c
        where c.oid in (select to_regclass(format('data.%I', t || '_' || no))
                        from unnest(array['fragments', 'embeddings', 'bm25_postings']) as t)
          and not exists (select 1 from pg_stats s
                          where s.schemaname = 'data' and s.tablename = c.relname and s.attname = 'org_id')
        order by c.oid
    loop
        execute format('select count(*) >= %s from (select from %s limit %s) x', p_min_rows, part, p_min_rows)
            into big;
        if big then
            execute format('analyze %s', part);
            analyzed := analyzed + 1;
        end if;
    end loop;
    return analyzed;
end
$$;


ALTER FUNCTION data._analyze_new_tenant(p_org_id text, p_min_rows integer) OWNER TO <migrator>;

--
-- Name: FUNCTION _analyze_new_tenant(p_org_id text, p_min_rows integer); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._analyze_new_tenant(p_org_id text, p_min_rows integer) IS 'Analyze the partitions of a tenant that were never analyzed once they hold enough rows (the planner misjudges them until then).';


--
-- Name: _authority(text, bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._authority(p_org_id text, p_fragment_ids bigint[]) RETURNS TABLE(fragment_id bigint, authority double precision, refreshed_at timestamp with time zone)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    select f.fragment_id, coalesce(a.authority, 0.0), (select max(r.refreshed_at) from data.authority_refreshes r)
    from data.fragments f
    left join data.fragment_authority a on a.org_id = f.org_id and a.fragment_id = f.fragment_id
    where f.org_id = p_org_id and f.org_id = (select data.acl_org()) and f.fragment_id = any (p_fragment_ids)
      and (f.repo_id is null or (select data.acl_org_wide()) or f.repo_id = any ((select data.acl_repos())::text[]))
      and (f.persona_id is null or (select data.acl_org_wide())
           or f.persona_id = any ((select data.acl_personas())::text[]))
      and (f.session_id is null or f.session_id = any ((select data.acl_sessions())::text[]))
$$;


ALTER FUNCTION data._authority(p_org_id text, p_fragment_ids bigint[]) OWNER TO <migrator>;

--
-- Name: FUNCTION _authority(p_org_id text, p_fragment_ids bigint[]); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._authority(p_org_id text, p_fragment_ids bigint[]) IS 'Authority of the given fragments the caller may read (0 when nothing cites them), with the time of the last refresh.';


--
-- Name: _bind(text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._bind(p_org_id text, p_principal_id text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    nonce text := gen_random_uuid()::text || gen_random_uuid()::text;
begin
    if pg_is_in_recovery() then
        -- A hot standby writes nothing: the binding is a setting signed for this backend
        -- and transaction (data._standby_binding reads it back).
        perform set_config('contexts.binding',
            concat_ws('.', 'standby', data._standby_signature(p_org_id, p_principal_id),
                      encode(convert_to(p_org_id, 'UTF8'), 'hex'), encode(convert_to(p_principal_id, 'UTF8'), 'hex')),
            true);
        return;
    end if;
    -- Earlier transactions' bindings of this backend are dead; so are old ones of others.
    delete from data.principal_bindings b
    where b.backend_pid = pg_backend_pid() or b.created_at < now() - interval '1 day';
    insert into data.principal_bindings (nonce, backend_pid, xact_id, org_id, principal_id)
    values (nonce, pg_backend_pid(), pg_current_xact_id(), p_org_id, p_principal_id);
    perform set_config('contexts.binding', nonce, true);
end
$$;


ALTER FUNCTION data._bind(p_org_id text, p_principal_id text) OWNER TO <migrator>;

--
-- Name: _bm25_index(text[], bigint[], tsvector[], text[], text[], text[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._bm25_index(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    with terms as (
        select f.org_id, f.fragment_id, f.repo_id, f.persona_id, f.session_id, t.lexeme as term,
               coalesce(array_length(t.positions, 1), 1) as tf
        from unnest(p_org_ids, p_fragment_ids, p_tsvs, p_repo_ids, p_persona_ids, p_session_ids)
             as f(org_id, fragment_id, tsv, repo_id, persona_id, session_id),
             unnest(f.tsv) as t
    ), sized as materialized (
        select terms.*, (sum(tf) over (partition by org_id, fragment_id))::int as dl from terms
    ), postings as (
        insert into data.bm25_postings (org_id, term, fragment_id, tf, dl, repo_id, persona_id, session_id)
        select org_id, term, fragment_id, tf, dl, repo_id, persona_id, session_id from sized
        order by org_id, term, fragment_id
    ), df as (
        insert into data.bm25_terms as s (org_id, term, repo_id, persona_id, session_id, df)
        select org_id, term, repo_id, persona_id, session_id, count(*) from sized
        group by org_id, term, repo_id, persona_id, session_id
        order by org_id, term, repo_id, persona_id, session_id
        on conflict (org_id, term, repo_id, persona_id, session_id) do update set df = s.df + excluded.df
    )
    insert into data.bm25_corpus as c (org_id, repo_id, persona_id, session_id, fragment_count, total_length)
    select org_id, repo_id, persona_id, session_id, count(distinct fragment_id), sum(tf) from sized
    group by org_id, repo_id, persona_id, session_id
    order by org_id, repo_id, persona_id, session_id
    on conflict (org_id, repo_id, persona_id, session_id) do update
        set fragment_count = c.fragment_count + excluded.fragment_count,
            total_length = c.total_length + excluded.total_length
$$;


ALTER FUNCTION data._bm25_index(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]) OWNER TO <migrator>;

--
-- Name: FUNCTION _bm25_index(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._bm25_index(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]) IS 'Add fragments (parallel arrays) to BM25: postings, document frequencies, corpus size.';


--
-- Name: _bm25_kept(text, bigint[], text[], timestamp with time zone, timestamp with time zone, boolean, timestamp with time zone); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._bm25_kept(p_org_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) RETURNS bigint[]
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    select coalesce(array_agg(f.fragment_id), '{}')
    from data.fragments f
    where f.org_id = p_org_id and f.fragment_id = any (p_fragment_ids)
      and (p_kinds is null or f.kind = any (p_kinds))
      and (p_updated_since is null or f.updated_at >= p_updated_since)
      and (p_updated_until is null or f.updated_at < p_updated_until)
      and (p_negative is null or f.negative = p_negative)
      and (p_valid_at is null
           or ((f.valid_from is null or f.valid_from <= p_valid_at)
               and (f.valid_until is null or f.valid_until > p_valid_at)))
$$;


ALTER FUNCTION data._bm25_kept(p_org_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) OWNER TO <migrator>;

--
-- Name: FUNCTION _bm25_kept(p_org_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._bm25_kept(p_org_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) IS 'The given fragments that pass the retrieval filters postings do not carry (kind, dates, negative, validity).';


--
-- Name: _bm25_on_fragment_change(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._bm25_on_fragment_change() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    -- Leaving (o_) and entering (n_) BM25: parallel arrays, one entry per fragment.
    o_orgs text[]; o_ids bigint[]; o_tsvs tsvector[]; o_repos text[]; o_personas text[]; o_sessions text[];
    n_orgs text[]; n_ids bigint[]; n_tsvs tsvector[]; n_repos text[]; n_personas text[]; n_sessions text[];
begin
    if tg_op = 'DELETE' then
        select array_agg(o.org_id), array_agg(o.fragment_id), array_agg(o.tsv),
               array_agg(o.repo_id), array_agg(o.persona_id), array_agg(o.session_id)
        into o_orgs, o_ids, o_tsvs, o_repos, o_personas, o_sessions
        from old_fragments o where o.active;
    elsif tg_op = 'UPDATE' then
        -- Per row: `active` changed, or the text an active fragment is indexed under did.
        select array_agg(o.org_id), array_agg(o.fragment_id), array_agg(o.tsv),
               array_agg(o.repo_id), array_agg(o.persona_id), array_agg(o.session_id)
        into o_orgs, o_ids, o_tsvs, o_repos, o_personas, o_sessions
        from old_fragments o join new_fragments n on n.fragment_id = o.fragment_id and n.org_id = o.org_id
        where o.active and (not n.active or o.tsv is distinct from n.tsv);
        select array_agg(n.org_id), array_agg(n.fragment_id), array_agg(n.tsv),
               array_agg(n.repo_id), array_agg(n.persona_id), array_agg(n.session_id)
        into n_orgs, n_ids, n_tsvs, n_repos, n_personas, n_sessions
        from old_fragments o join new_fragments n on n.fragment_id = o.fragment_id and n.org_id = o.org_id
        where n.active and (not o.active or o.tsv is distinct from n.tsv);
    else
        select array_agg(n.org_id), array_agg(n.fragment_id), array_agg(n.tsv),
               array_agg(n.repo_id), array_agg(n.persona_id), array_agg(n.session_id)
        into n_orgs, n_ids, n_tsvs, n_repos, n_personas, n_sessions
        from new_fragments n where n.active;
    end if;
    if o_ids is not null then
        perform data._bm25_unindex(o_orgs, o_ids, o_tsvs, o_repos, o_personas, o_sessions);
    end if;
    if n_ids is not null then
        perform data._bm25_index(n_orgs, n_ids, n_tsvs, n_repos, n_personas, n_sessions);
    end if;
    return null;
end
$$;


ALTER FUNCTION data._bm25_on_fragment_change() OWNER TO <migrator>;

--
-- Name: _bm25_scores(text, text, text, text, text, bigint[], double precision, double precision); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._bm25_scores(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k1 double precision, p_b double precision) RETURNS TABLE(fragment_id bigint, score double precision)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    with corpus as materialized (
        select sum(c.fragment_count)::float8 as n,
               sum(c.total_length)::float8 / greatest(sum(c.fragment_count), 1)::float8 as avgdl
        from data.bm25_corpus c
        where c.org_id = p_org_id
          and data._in_scope(c.repo_id, c.persona_id, c.session_id, p_repo_id, p_persona_id, p_session_id)
        having sum(c.fragment_count) > 0
    ), query_terms as materialized (
        select distinct t.lexeme as term
        from unnest(api.lexical_tsvector(p_query)) as t
    ), weighted as materialized (
        -- `= any(array(...))`: an index condition on (org_id, term), one probe per term.
        select s.term, ln(1.0::float8 + (corpus.n - sum(s.df)::float8 + 0.5) / (sum(s.df)::float8 + 0.5)) as idf
        from data.bm25_terms s
        cross join corpus
        where s.org_id = p_org_id and s.term = any (array(select q.term from query_terms q))
          and s.df > 0
          and data._in_scope(s.repo_id, s.persona_id, s.session_id, p_repo_id, p_persona_id, p_session_id)
        group by s.term, corpus.n
    )
    select p.fragment_id,
           sum(w.idf * (p.tf::float8 * (p_k1 + 1.0))
               / (p.tf::float8 + p_k1 * (1.0 - p_b + p_b * p.dl::float8 / corpus.avgdl)))
    from weighted w
    cross join corpus
    -- One index scan per term. Given ids, `fragment_id = any (ids)` is an index
    -- condition in the second branch, so a common term's list is never read whole: a
    -- join of the terms with the postings (or an `ids is null or ...` test) let the
    -- cached plan read it (100 ids at 100k fragments: 224 ms instead of a few). Postings
    -- exist only for active fragments (the trigger keeps it so) and carry their scope
    -- labels: no heap access to data.fragments at all.
    cross join lateral (
        select p.fragment_id, p.tf, p.dl
        from data.bm25_postings p
        where p_fragment_ids is null and p.org_id = p_org_id and p.term = w.term
          and data._in_scope(p.repo_id, p.persona_id, p.session_id, p_repo_id, p_persona_id, p_session_id)
        union all
        select p.fragment_id, p.tf, p.dl
        from data.bm25_postings p
        where p_fragment_ids is not null and p.org_id = p_org_id and p.term = w.term
          and p.fragment_id = any (p_fragment_ids)
          and data._in_scope(p.repo_id, p.persona_id, p.session_id, p_repo_id, p_persona_id, p_session_id)
        offset 0) p
    group by p.fragment_id
$$;


ALTER FUNCTION data._bm25_scores(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k1 double precision, p_b double precision) OWNER TO <migrator>;

--
-- Name: _bm25_top(text, text, text, text, text, bigint[], integer, text[], timestamp with time zone, timestamp with time zone, boolean, timestamp with time zone, double precision, double precision, bigint); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._bm25_top(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k integer, p_kinds text[] DEFAULT NULL::text[], p_updated_since timestamp with time zone DEFAULT NULL::timestamp with time zone, p_updated_until timestamp with time zone DEFAULT NULL::timestamp with time zone, p_negative boolean DEFAULT NULL::boolean, p_valid_at timestamp with time zone DEFAULT NULL::timestamp with time zone, p_k1 double precision DEFAULT 1.2, p_b double precision DEFAULT 0.75, p_prune_from bigint DEFAULT 20000) RETURNS TABLE(fragment_id bigint, score double precision)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    filtered constant boolean := p_kinds is not null or p_updated_since is not null
        or p_updated_until is not null or p_negative is not null or p_valid_at is not null;
    n float8;
    avgdl float8;
    -- The query's terms found in scope, most common first, with idf and frequency.
    terms text[];
    idfs float8[];
    dfs bigint[];
    seed_terms text[];
    seed_ids bigint[];
    theta float8;
    -- terms[1:cut] are non-essential; their bounds sum to ne_bound.
    cut int := 0;
    ne_bound float8 := 0;
    i int;
    ids bigint[];
    partials float8[];
    kept bigint[];
begin
    if p_k is null or p_k < 1 then
        return;
    end if;
    select sum(c.fragment_count)::float8,
           sum(c.total_length)::float8 / greatest(sum(c.fragment_count), 1)::float8
      into n, avgdl
    from data.bm25_corpus c
    where c.org_id = p_org_id
      and data._in_scope(c.repo_id, c.persona_id, c.session_id, p_repo_id, p_persona_id, p_session_id)
    having sum(c.fragment_count) > 0;
    if n is null then
        return;
    end if;
    select array_agg(t.term order by t.idf, t.term), array_agg(t.idf order by t.idf, t.term),
           array_agg(t.df order by t.idf, t.term)
      into terms, idfs, dfs
    from (select s.term, sum(s.df) as df,
                 ln(1.0::float8 + (n - sum(s.df)::float8 + 0.5) / (sum(s.df)::float8 + 0.5)) as idf
          from data.bm25_terms s
          where s.org_id = p_org_id
            and s.term = any (array(select distinct q.lexeme from unnest(api.lexical_tsvector(p_query)) as q))
            and s.df > 0
            and data._in_scope(s.repo_id, s.persona_id, s.session_id, p_repo_id, p_persona_id, p_session_id)
          group by s.term) t;
    if terms is null then
        return;
    end if;

    if (select sum(d) from unnest(dfs) as d) >= p_prune_from then
        -- Seeds: the fragments best on the rarest terms (up to 3,000 of their postings),
        -- those that pass the filters, the 2k best kept. Their exact k-th best score is
        -- theta: the true top k holds k fragments at least that good.
        select array_agg(r.term) into seed_terms
        from (select r.term, sum(r.df) over (order by r.df, r.term) - r.df as before
              from unnest(terms, dfs) as r(term, df)) r
        where r.before < 3000;
        select array_agg(x.fragment_id order by x.partial desc, x.fragment_id) into seed_ids
        from (select p.fragment_id,
                     sum(p.idf * (p.tf::float8 * (p_k1 + 1.0))
                         / (p.tf::float8 + p_k1 * (1.0 - p_b + p_b * p.dl::float8 / avgdl))) as partial
              from (select w.idf, p.fragment_id, p.tf, p.dl
                    from (select w.term, w.idf from unnest(terms, idfs) as w(term, idf)
                          where w.term = any (seed_terms) order by w.idf desc offset 0) w
                    join lateral (select p.fragment_id, p.tf, p.dl from data.bm25_postings p
                                  where p.org_id = p_org_id and p.term = w.term
                                    and data._in_scope(p.repo_id, p.persona_id, p.session_id, p_repo_id, p_persona_id, p_session_id)
                                    and (p_fragment_ids is null or p.fragment_id = any (p_fragment_ids))) p on true
                    limit 3000) p
              group by p.fragment_id) x;
        if filtered and seed_ids is not null then
            kept := data._bm25_kept(p_org_id, seed_ids, p_kinds, p_updated_since, p_updated_until,
                                    p_negative, p_valid_at);
            select array_agg(c.id order by c.ord) into seed_ids
            from unnest(seed_ids) with ordinality as c(id, ord)
            join unnest(kept) as k(id) on k.id = c.id;
        end if;
        seed_ids := seed_ids[1:greatest(2 * p_k, 50)];
        if cardinality(seed_ids) >= p_k then
            -- One index probe per term for the seeds' postings (`fragment_id = any` as an
            -- index condition): joined instead, the plan read every posting of the seeds,
            -- all their terms (10,000 rows for 200 seeds at 100k fragments, 36 ms).
            select s.score into theta
            from (select sum(w.idf * (p.tf::float8 * (p_k1 + 1.0))
                             / (p.tf::float8 + p_k1 * (1.0 - p_b + p_b * p.dl::float8 / avgdl))) as score
                  from unnest(terms, idfs) as w(term, idf)
                  cross join lateral (select p.fragment_id, p.tf, p.dl from data.bm25_postings p
                                      where p.org_id = p_org_id and p.term = w.term
                                        and p.fragment_id = any (seed_ids)
                                      offset 0) p
                  group by p.fragment_id) s
            order by s.score desc
            offset p_k - 1 limit 1;
            -- The shortest run of common terms whose bounds stay below theta (a margin
            -- of 1e-9 for rounding): none of them can lift a fragment to theta alone.
            i := 1;
            while i <= cardinality(terms)
                  and ne_bound + idfs[i] * (p_k1 + 1.0) < theta * (1.0 - 1e-9) loop
                ne_bound := ne_bound + idfs[i] * (p_k1 + 1.0);
                cut := i;
                i := i + 1;
            end loop;
        end if;
    end if;

    if cut = 0 or cut = cardinality(terms) then
        -- Nothing to skip: score every posting (data._bm25_scores' plan).
        if not filtered then
            return query
            select p.fragment_id,
                   sum(w.idf * (p.tf::float8 * (p_k1 + 1.0))
                       / (p.tf::float8 + p_k1 * (1.0 - p_b + p_b * p.dl::float8 / avgdl))) as score
            from unnest(terms, idfs) as w(term, idf)
            join data.bm25_postings p on p.org_id = p_org_id and p.term = w.term
            where data._in_scope(p.repo_id, p.persona_id, p.session_id, p_repo_id, p_persona_id, p_session_id)
              and (p_fragment_ids is null or p.fragment_id = any (p_fragment_ids))
            group by p.fragment_id
            order by score desc, p.fragment_id
            limit p_k;
            return;
        end if;
        select coalesce(array_agg(b.fragment_id), '{}'), coalesce(array_agg(b.score), '{}')
          into ids, partials
        from (select p.fragment_id,
                     sum(w.idf * (p.tf::float8 * (p_k1 + 1.0))
                         / (p.tf::float8 + p_k1 * (1.0 - p_b + p_b * p.dl::float8 / avgdl))) as score
              from unnest(terms, idfs) as w(term, idf)
              join data.bm25_postings p on p.org_id = p_org_id and p.term = w.term
              where data._in_scope(p.repo_id, p.persona_id, p.session_id, p_repo_id, p_persona_id, p_session_id)
                and (p_fragment_ids is null or p.fragment_id = any (p_fragment_ids))
              group by p.fragment_id) b;
        kept := data._bm25_kept(p_org_id, ids, p_kinds, p_updated_since, p_updated_until, p_negative, p_valid_at);
        return query
        select c.id, c.score
        from unnest(ids, partials) as c(id, score)
        join unnest(kept) as k(id) on k.id = c.id
        order by c.score desc, c.id
        limit p_k;
        return;
    end if;

    raise debug 'bm25_top: % of % terms non-essential (bound %, theta %)', cut, cardinality(terms), ne_bound, theta;
    -- Candidates: fragments of the essential terms that can still reach theta.
    select coalesce(array_agg(e.fragment_id), '{}'), coalesce(array_agg(e.partial), '{}')
      into ids, partials
    from (select p.fragment_id,
                 sum(w.idf * (p.tf::float8 * (p_k1 + 1.0))
                     / (p.tf::float8 + p_k1 * (1.0 - p_b + p_b * p.dl::float8 / avgdl))) as partial
          from unnest(terms[cut + 1:], idfs[cut + 1:]) as w(term, idf)
          join data.bm25_postings p on p.org_id = p_org_id and p.term = w.term
          where data._in_scope(p.repo_id, p.persona_id, p.session_id, p_repo_id, p_persona_id, p_session_id)
            and (p_fragment_ids is null or p.fragment_id = any (p_fragment_ids))
          group by p.fragment_id) e
    where e.partial + ne_bound >= theta * (1.0 - 1e-9);
    if filtered then
        kept := data._bm25_kept(p_org_id, ids, p_kinds, p_updated_since, p_updated_until, p_negative, p_valid_at);
        select coalesce(array_agg(c.id), '{}'), coalesce(array_agg(c.partial), '{}')
          into ids, partials
        from unnest(ids, partials) as c(id, partial)
        join unnest(kept) as k(id) on k.id = c.id;
    end if;
    -- Partial scores are lower bounds of the final ones: the k-th best of them may
    -- raise theta. Then the non-essential terms, the likeliest first, one probe by
    -- (org, term, fragment) per candidate still able to reach theta with the bounds of
    -- the terms left; each round may raise theta again and drop more candidates.
    i := cut;
    loop
        select greatest(theta, (select c.partial from unnest(partials) as c(partial)
                                order by c.partial desc offset p_k - 1 limit 1))
          into theta;
        raise debug 'bm25_top: % candidates, theta %, bound left %', cardinality(ids), theta, ne_bound;
        exit when i = 0;
        select coalesce(array_agg(c.id), '{}'), coalesce(array_agg(c.partial), '{}')
          into ids, partials
        from unnest(ids, partials) as c(id, partial)
        where c.partial + ne_bound >= theta * (1.0 - 1e-9);
        -- The term's postings of these candidates: `fragment_id = any (ids)` is an index
        -- condition (a skip scan over the sorted ids, never the whole list), and the
        -- contributions are added by grouping, not by a join, which a plan estimating
        -- ten candidates would run as a nested loop over both lists.
        select coalesce(array_agg(x.id), '{}'), coalesce(array_agg(x.partial), '{}')
          into ids, partials
        from (select c.id, sum(c.score) as partial
              from (select u.id, u.partial as score from unnest(ids, partials) as u(id, partial)
                    union all
                    select p.fragment_id,
                           idfs[i] * (p.tf::float8 * (p_k1 + 1.0))
                           / (p.tf::float8 + p_k1 * (1.0 - p_b + p_b * p.dl::float8 / avgdl))
                    from data.bm25_postings p
                    where p.org_id = p_org_id and p.term = terms[i] and p.fragment_id = any (ids)) c
              group by c.id) x;
        ne_bound := ne_bound - idfs[i] * (p_k1 + 1.0);
        i := i - 1;
    end loop;
    return query
    select c.id, c.partial
    from unnest(ids, partials) as c(id, partial)
    order by c.partial desc, c.id
    limit p_k;
end
$$;


ALTER FUNCTION data._bm25_top(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k integer, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone, p_k1 double precision, p_b double precision, p_prune_from bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION _bm25_top(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k integer, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone, p_k1 double precision, p_b double precision, p_prune_from bigint); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._bm25_top(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k integer, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone, p_k1 double precision, p_b double precision, p_prune_from bigint) IS 'Exact BM25 top k within a scope and filters, pruning common terms by MaxScore from p_prune_from postings on (docs/adr/0023).';


--
-- Name: _bm25_unindex(text[], bigint[], tsvector[], text[], text[], text[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._bm25_unindex(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    delete from data.bm25_postings p
    using unnest(p_org_ids, p_fragment_ids) as g(org_id, fragment_id)
    where p.org_id = g.org_id and p.fragment_id = g.fragment_id;

    update data.bm25_terms s set df = s.df - g.n
    from (select f.org_id, t.lexeme as term, f.repo_id, f.persona_id, f.session_id, count(*) as n
          from unnest(p_org_ids, p_tsvs, p_repo_ids, p_persona_ids, p_session_ids)
               as f(org_id, tsv, repo_id, persona_id, session_id),
               unnest(f.tsv) as t
          group by 1, 2, 3, 4, 5) g
    where s.org_id = g.org_id and s.term = g.term and s.repo_id is not distinct from g.repo_id
      and s.persona_id is not distinct from g.persona_id and s.session_id is not distinct from g.session_id;

    delete from data.bm25_terms s
    using (select distinct f.org_id, t.lexeme as term, f.repo_id, f.persona_id, f.session_id
           from unnest(p_org_ids, p_tsvs, p_repo_ids, p_persona_ids, p_session_ids)
                as f(org_id, tsv, repo_id, persona_id, session_id),
                unnest(f.tsv) as t) g
    where s.df <= 0 and s.org_id = g.org_id and s.term = g.term and s.repo_id is not distinct from g.repo_id
      and s.persona_id is not distinct from g.persona_id and s.session_id is not distinct from g.session_id;

    update data.bm25_corpus c set fragment_count = c.fragment_count - g.n, total_length = c.total_length - g.len
    from (select f.org_id, f.repo_id, f.persona_id, f.session_id,
                 count(distinct f.fragment_id) as n, sum(coalesce(array_length(t.positions, 1), 1)) as len
          from unnest(p_org_ids, p_fragment_ids, p_tsvs, p_repo_ids, p_persona_ids, p_session_ids)
               as f(org_id, fragment_id, tsv, repo_id, persona_id, session_id),
               unnest(f.tsv) as t
          group by 1, 2, 3, 4) g
    where c.org_id = g.org_id and c.repo_id is not distinct from g.repo_id
      and c.persona_id is not distinct from g.persona_id and c.session_id is not distinct from g.session_id;

    delete from data.bm25_corpus c
    using unnest(p_org_ids, p_repo_ids, p_persona_ids, p_session_ids) as g(org_id, repo_id, persona_id, session_id)
    where c.fragment_count <= 0 and c.org_id = g.org_id and c.repo_id is not distinct from g.repo_id
      and c.persona_id is not distinct from g.persona_id and c.session_id is not distinct from g.session_id;
$$;


ALTER FUNCTION data._bm25_unindex(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]) OWNER TO <migrator>;

--
-- Name: FUNCTION _bm25_unindex(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._bm25_unindex(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]) IS 'Remove fragments (parallel arrays) from BM25: the exact inverse of data._bm25_index.';


--
-- Name: _bypasses_rls(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._bypasses_rls() RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$ select coalesce((select r.rolsuper or r.rolbypassrls from pg_roles r where r.rolname = current_user), false) $$;


ALTER FUNCTION data._bypasses_rls() OWNER TO <migrator>;

--
-- Name: _check_fusion(jsonb); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._check_fusion(p_fusion jsonb) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    w record;
begin
    if jsonb_typeof(p_fusion) is distinct from 'object' or p_fusion ->> 'method' not in ('weighted', 'rrf') then
        raise exception 'fusion must be {"method": "weighted" | "rrf", ...}' using errcode = '22023';
    end if;
    if p_fusion ? 'dense_weight' and (jsonb_typeof(p_fusion -> 'dense_weight') <> 'number'
                                      or (p_fusion ->> 'dense_weight')::float8 not between 0 and 1) then
        raise exception 'fusion dense_weight must be a number in [0, 1]' using errcode = '22023';
    end if;
    if p_fusion ? 'lexical_weight' then
        if jsonb_typeof(p_fusion -> 'lexical_weight') <> 'object' then
            raise exception 'fusion lexical_weight must map a namespace to a number' using errcode = '22023';
        end if;
        for w in select key, value from jsonb_each(p_fusion -> 'lexical_weight') loop
            if jsonb_typeof(w.value) <> 'number' or (w.value)::text::float8 not between 0 and 1 then
                raise exception 'fusion lexical_weight of % must be a number in [0, 1]', w.key using errcode = '22023';
            end if;
        end loop;
    end if;
end
$$;


ALTER FUNCTION data._check_fusion(p_fusion jsonb) OWNER TO <migrator>;

--
-- Name: _check_halflives(jsonb); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._check_halflives(p_halflife_days jsonb) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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
$_$;


ALTER FUNCTION data._check_halflives(p_halflife_days jsonb) OWNER TO <migrator>;

--
-- Name: _check_reading(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._check_reading() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    if new.reading is not null
       and substring(new.reading from 9 for 4)
           is distinct from substring(sha256(convert_to(new.text, 'UTF8')) from 1 for 4) then
        raise exception 'the reading of fragment % was not made of its text', new.fragment_id
            using errcode = '23514', constraint = 'fragments_reading_text';
    end if;
    return new;
end
$$;


ALTER FUNCTION data._check_reading() OWNER TO <migrator>;

--
-- Name: _check_rule_globs(text[], text[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._check_rule_globs(p_path_globs text[], p_symbol_globs text[]) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    if cardinality(coalesce(p_path_globs, '{}')) + cardinality(coalesce(p_symbol_globs, '{}')) not between 1 and 32
       or exists (select 1 from unnest(coalesce(p_path_globs, '{}') || coalesce(p_symbol_globs, '{}')) g
                  where g is null or length(g) not between 1 and 1024 or g ~ '[\x01-\x1f\x7f]') then
        raise exception 'a rule has 1 to 32 path or symbol globs, each 1 to 1024 characters without control characters'
            using errcode = '22023';
    end if;
end
$$;


ALTER FUNCTION data._check_rule_globs(p_path_globs text[], p_symbol_globs text[]) OWNER TO <migrator>;

--
-- Name: _check_subscription(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._check_subscription() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    ctx data.contexts;
begin
    select c.* into ctx from data.contexts c where c.context_id = new.context_id;
    if new.revoked_at is null and (ctx.persona_id is not null or ctx.session_id is not null) then
        raise exception 'ctx_% is a % Context: it is read only inside its %, never subscribed', new.context_id,
            case when ctx.session_id is not null then 'session' else 'persona' end,
            case when ctx.session_id is not null then 'session' else 'persona' end
            using errcode = '42501',
            hint = 'Publish a Context of an org or repo scope; bundle the notes worth sharing into it once promoted.';
    end if;
    return new;
end
$$;


ALTER FUNCTION data._check_subscription() OWNER TO <migrator>;

--
-- Name: _citation_pagerank(double precision, integer); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._citation_pagerank(p_damping double precision DEFAULT 0.85, p_iterations integer DEFAULT 30) RETURNS TABLE(org_id text, fragment_id bigint, pagerank double precision, authority double precision)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    base bigint;
    src int[];
    dst int[];
    weight float8[];
    n int;
    pr float8[];
begin
    if p_damping is null or p_damping <= 0 or p_damping >= 1 or p_iterations is null or p_iterations < 1 then
        raise exception 'damping must lie in (0, 1) and iterations be positive' using errcode = '22023';
    end if;
    -- Nodes are numbered by fragment id (id - base + 1): no join to number them.
    with refs as materialized (
        -- Every reference of a live fragment from a live document, and what it cites.
        select l.fragment_id as citing, t.fragment_id as cited,
               count(*) over (partition by l.fragment_id) as made,
               (c.repo_id is null or c.repo_id = t.repo_id) and (c.persona_id is null or c.persona_id = t.persona_id)
               and (c.session_id is null or c.session_id = t.session_id) as counts
        from data.fragment_links l
        join data.documents d on d.doc_id = l.doc_id and d.deleted_at is null
        join data.fragments c on c.org_id = l.org_id and c.fragment_id = l.fragment_id and c.active
        left join data.fragments t on t.org_id = l.org_id and t.fragment_id = l.target_fragment_id and t.active
    ), links as materialized (
        select r.citing, r.cited, 1.0::float8 / r.made as w from refs r where r.counts and r.cited <> r.citing
    ), bounds as (
        select least(min(k.citing), min(k.cited)) as lo, greatest(max(k.citing), max(k.cited)) as hi from links k
    )
    -- Sums run in this order (cited, then citing fragment), whatever else exists.
    select b.lo, (b.hi - b.lo + 1)::int,
           (select array_agg((k.citing - b.lo + 1)::int order by k.cited, k.citing, k.w) from links k),
           (select array_agg((k.cited - b.lo + 1)::int order by k.cited, k.citing, k.w) from links k),
           (select array_agg(k.w order by k.cited, k.citing, k.w) from links k)
      into base, n, src, dst, weight
    from bounds b;
    if base is null then
        return;
    end if;
    pr := array_fill(1.0::float8, array[n]);
    for iteration in 1..p_iterations loop
        select array_agg((1.0 - p_damping) + p_damping * coalesce(t.v, 0.0) order by g.i) into pr
        from generate_series(1, n) g(i)
        left join (select e.d, sum(pr[e.s] * e.w) as v from unnest(src, dst, weight) e(s, d, w) group by e.d) t
          on t.d = g.i;
    end loop;
    return query
    with scored as materialized (
        select f.org_id, f.fragment_id, f.repo_id, f.persona_id, f.session_id, pr[g.i] as p,
               pr[g.i] - (1.0 - p_damping) as gain
        from (select distinct x.i from unnest(src || dst) x(i)) g
        join data.fragments f on f.fragment_id = base + g.i - 1
    ), classes as (
        select s.org_id, s.repo_id, s.persona_id, s.session_id, max(s.gain) as top
        from scored s group by s.org_id, s.repo_id, s.persona_id, s.session_id
    ), reach as (
        -- The largest gain among the classes each class's readers all see.
        select c.org_id, c.repo_id, c.persona_id, c.session_id, max(b.top) as top
        from classes c
        join classes b on b.org_id = c.org_id and (b.repo_id is null or b.repo_id = c.repo_id)
                      and (b.persona_id is null or b.persona_id = c.persona_id)
                      and (b.session_id is null or b.session_id = c.session_id)
        group by c.org_id, c.repo_id, c.persona_id, c.session_id
    )
    select s.org_id, s.fragment_id, s.p,
           case when r.top > 0 then least(1.0, greatest(0.0, s.gain / r.top)) else 0.0 end
    from scored s
    join reach r on r.org_id = s.org_id and r.repo_id is not distinct from s.repo_id
                and r.persona_id is not distinct from s.persona_id and r.session_id is not distinct from s.session_id;
end
$$;


ALTER FUNCTION data._citation_pagerank(p_damping double precision, p_iterations integer) OWNER TO <migrator>;

--
-- Name: FUNCTION _citation_pagerank(p_damping double precision, p_iterations integer); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._citation_pagerank(p_damping double precision, p_iterations integer) IS 'Citation PageRank over the links whose citing fragment every reader of the cited one may read, each citer''s share divided by all the references it makes; normalised to [0, 1] among the scope classes a fragment''s readers all see. The query of data.fragment_authority.';


--
-- Name: _clamp_unreadable_times(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._clamp_unreadable_times() RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
    c record;
    k text;
    fixed bigint;
    total bigint := 0;
    lowest constant timestamptz := '0001-01-02 00:00:00+00';
    highest constant timestamptz := '9999-12-30 00:00:00+00';
    beyond constant timestamptz := '9999-12-31 00:00:00+00';
begin
    -- Metadata windows, as ISO 8601 in UTC (as ingestion writes them).
    foreach k in array array['valid_from', 'valid_until'] loop
        update data.document_versions v
        set metadata = v.metadata || jsonb_build_object(k, to_char(
            least(greatest((v.metadata ->> k)::timestamptz, lowest), highest) at time zone 'UTC',
            'YYYY-MM-DD"T"HH24:MI:SS"+00:00"'))
        where jsonb_typeof(v.metadata -> k) = 'string'
          and pg_input_is_valid(v.metadata ->> k, 'timestamptz')
          and not ((v.metadata ->> k)::timestamptz >= lowest and (v.metadata ->> k)::timestamptz < beyond);
        get diagnostics fixed = row_count;
        if fixed > 0 then
            raise notice 'data.document_versions.metadata %: % unreadable times clamped', k, fixed;
        end if;
        total := total + fixed;
    end loop;
    for c in
        select cl.relname as tbl, a.attname as col
        from pg_attribute a
        join pg_class cl on cl.oid = a.attrelid
        join pg_namespace n on n.oid = cl.relnamespace
        where n.nspname = 'data' and cl.relkind in ('r', 'p') and not cl.relispartition
          and a.attnum > 0 and not a.attisdropped and a.atttypid = 'timestamptz'::regtype
        order by cl.relname, a.attnum
    loop
        execute format('alter table data.%I drop constraint if exists %I', c.tbl, c.tbl || '_' || c.col || '_readable');
        execute format(
            'update data.%1$I set %2$I = least(greatest(%2$I, %3$L::timestamptz), %4$L::timestamptz)'
            ' where not (%2$I >= %3$L::timestamptz and %2$I < %5$L::timestamptz)',
            c.tbl, c.col, lowest, highest, beyond);
        get diagnostics fixed = row_count;
        if fixed > 0 then
            raise notice 'data.%.%: % unreadable times clamped', c.tbl, c.col, fixed;
        end if;
        total := total + fixed;
        execute format('alter table data.%I add constraint %I check (data._readable_time(%I, %L))',
                       c.tbl, c.tbl || '_' || c.col || '_readable', c.col, c.tbl || '.' || c.col);
    end loop;
    return total;
end
$_$;


ALTER FUNCTION data._clamp_unreadable_times() OWNER TO <migrator>;

--
-- Name: FUNCTION _clamp_unreadable_times(); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._clamp_unreadable_times() IS 'Clamp every stored time no reader can decode (time columns of the data schema, metadata windows) to the readable range, and check each time column from then on; returns the values clamped. Migration 0026 runs it.';


--
-- Name: _context_rows(bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._context_rows(p_ids bigint[]) RETURNS TABLE(context_id bigint, ref text, org_id text, repo_id text, persona_id text, session_id text, name text, description text, created_by text, created_at timestamp with time zone, retired_at timestamp with time zone, latest_version integer, fragment_count integer, subscribed boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    -- A subscriber reads the Context's name and description, not who in the publisher's
    -- org made it (docs/dba.md, what row-level security does not hide).
    select c.context_id, 'ctx_' || c.context_id, c.org_id, c.repo_id, c.persona_id, c.session_id, c.name,
           c.description, case when r.via_subscription then null else c.created_by end, c.created_at,
           c.retired_at, lv.version, lv.fragment_count, coalesce(r.via_subscription, false)
    from data.contexts c
    left join lateral (select v.version, v.fragment_count from data.context_versions v
                       join data._readable_context_versions() rv
                         on rv.context_id = v.context_id and rv.version = v.version
                       where v.context_id = c.context_id
                       order by v.version desc limit 1) lv on true
    left join lateral (select bool_and(rv.via_subscription) as via_subscription
                       from data._readable_context_versions() rv where rv.context_id = c.context_id) r on true
    where c.context_id = any (p_ids)
    order by c.context_id
$$;


ALTER FUNCTION data._context_rows(p_ids bigint[]) OWNER TO <migrator>;

--
-- Name: _context_versions(boolean, text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._context_versions(p_scoped boolean, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text) RETURNS TABLE(context_id bigint, version integer, via_subscription boolean)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    select v.context_id, v.version, false
    from data.contexts c
    join data.context_versions v on v.context_id = c.context_id
    where c.org_id = (select data.acl_org())
      and (c.repo_id is null or (select data.acl_org_wide()) or c.repo_id = any ((select data.acl_repos())::text[]))
      and (c.persona_id is null or (select data.acl_org_wide())
           or c.persona_id = any ((select data.acl_personas())::text[]))
      and (c.session_id is null or c.session_id = any ((select data.acl_sessions())::text[]))
      and (not p_scoped or data._in_scope(c.repo_id, c.persona_id, c.session_id, p_repo_id, p_persona_id, p_session_id))
    union
    select s.context_id, s.resolved, true
    from (select s.context_id,
                 coalesce(s.version, (select max(v.version) from data.context_versions v
                                      where v.context_id = s.context_id)) as resolved
          from data.context_subscriptions s
          join data.contexts c on c.context_id = s.context_id and c.org_id = s.org_id
          where s.revoked_at is null
            and c.persona_id is null and c.session_id is null
            and s.subscriber_org_id = (select data.acl_org())
            and (s.subscriber_repo_id is null or (select data.acl_org_wide())
                 or s.subscriber_repo_id = any ((select data.acl_repos())::text[]))
            and (not p_scoped or s.subscriber_repo_id is null or p_repo_id is null
                 or s.subscriber_repo_id = p_repo_id)) s
    where s.resolved is not null
$$;


ALTER FUNCTION data._context_versions(p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION _context_versions(p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._context_versions(p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text) IS 'Context versions the current principal may read (with p_scoped: that a request in that scope may name): every version of a Context whose scope its grants cover, and the version each live subscription of its org (or repo) gives it, of org and repo Contexts only.';


--
-- Name: _create_tenant_partitions(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._create_tenant_partitions(p_org_id text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    no int := (select o.org_no from data.orgs o where o.org_id = p_org_id);
    t text;
    stale name;
begin
    if no is null then
        raise exception 'unknown org: %', p_org_id using errcode = 'P0002';
    end if;
    foreach t in array array['fragments', 'embeddings', 'bm25_postings'] loop
        if exists (select 1 from pg_partitioned_table pt
                   where pt.partrelid = format('data.%I', t)::regclass and pt.partdefid <> 0) then
            continue;
        end if;
        -- A deleted org leaves its (emptied) partitions; an org created again under the
        -- same id takes them over under its new number.
        select c.relname into stale
        from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = format('data.%I', t)::regclass
          and pg_get_expr(c.relpartbound, c.oid) = format('FOR VALUES IN (%L)', p_org_id)
          and c.relname <> t || '_' || no;
        if stale is not null then
            execute format('alter table data.%I rename to %I', stale, t || '_' || no);
        end if;
        if to_regclass(format('data.%I', t || '_' || no)) is null then
            execute format('create table data.%I partition of data.%I for values in (%L)', t || '_' || no, t, p_org_id);
            execute format('comment on table data.%I is %L', t || '_' || no,
                           format('Partition of data.%s for one org (data.orgs.org_no = %s).', t, no));
            -- Reached only through the parent (whose policies apply); direct access is denied.
            execute format('alter table data.%I enable row level security', t || '_' || no);
            execute format('alter table data.%I force row level security', t || '_' || no);
            execute format('create policy direct_access_denied on data.%I using (false)', t || '_' || no);
        end if;
    end loop;
end
$$;


ALTER FUNCTION data._create_tenant_partitions(p_org_id text) OWNER TO <migrator>;

--
-- Name: _deactivate_unsourced(bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._deactivate_unsourced(p_fragment_ids bigint[]) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    update data.fragments f set active = false
    where f.fragment_id = any(p_fragment_ids) and f.active
      and not exists (select 1 from data.fragment_sources s
                      where s.fragment_id = f.fragment_id and s.retired_at is null
                        and s.content_hash = f.content_hash)
$$;


ALTER FUNCTION data._deactivate_unsourced(p_fragment_ids bigint[]) OWNER TO <migrator>;

--
-- Name: _dense_hits(text, integer, integer, extensions.vector, integer, text, text, text, bigint[], text[], timestamp with time zone, timestamp with time zone, boolean, timestamp with time zone); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._dense_hits(p_org_id text, p_model_id integer, p_dims integer, p_query_vector extensions.vector, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[] DEFAULT NULL::bigint[], p_kinds text[] DEFAULT NULL::text[], p_updated_since timestamp with time zone DEFAULT NULL::timestamp with time zone, p_updated_until timestamp with time zone DEFAULT NULL::timestamp with time zone, p_negative boolean DEFAULT NULL::boolean, p_valid_at timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(fragment_id bigint, similarity double precision, rank integer)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $_$
begin
    perform set_config('hnsw.ef_search', least(greatest(p_k, 40), 1000)::text, true);
    perform set_config('hnsw.iterative_scan', 'relaxed_order', true);
    -- Literal model id and dims so the partial expression index matches.
    return query execute format($query$
        with nearest as materialized (
            select e.fragment_id, (e.embedding::vector(%1$s) <=> $1::vector(%1$s)) as distance
            from data.embeddings e
            join data.fragments f on f.fragment_id = e.fragment_id and f.org_id = e.org_id
            where e.model_id = %2$s and e.org_id = $2 and f.active
              and data._in_scope(f.repo_id, f.persona_id, f.session_id, $3, $4, $5)
              and ($7::bigint[] is null or e.fragment_id = any ($7::bigint[]))
              and ($8::text[] is null or f.kind = any ($8::text[]))
              and ($9::timestamptz is null or f.updated_at >= $9::timestamptz)
              and ($10::timestamptz is null or f.updated_at < $10::timestamptz)
              and ($11::boolean is null or f.negative = $11::boolean)
              and ($12::timestamptz is null
                   or ((f.valid_from is null or f.valid_from <= $12::timestamptz)
                       and (f.valid_until is null or f.valid_until > $12::timestamptz)))
            order by e.embedding::vector(%1$s) <=> $1::vector(%1$s)
            limit $6
        )
        select n.fragment_id, 1.0::float8 - n.distance,
               (row_number() over (order by n.distance, n.fragment_id))::int
        from nearest n
        order by n.distance, n.fragment_id
        $query$, p_dims, p_model_id)
    using p_query_vector, p_org_id, p_repo_id, p_persona_id, p_session_id, p_k,
          p_fragment_ids, p_kinds, p_updated_since, p_updated_until, p_negative, p_valid_at;
end
$_$;


ALTER FUNCTION data._dense_hits(p_org_id text, p_model_id integer, p_dims integer, p_query_vector extensions.vector, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) OWNER TO <migrator>;

--
-- Name: _document_keys(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._document_keys(p_path text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    with parts as (
        select string_to_array(regexp_replace(p_path, '\.[A-Za-z0-9]+$', ''), '/') as mod,
               string_to_array(p_path, '/') as segs
    ), trimmed as (
        -- A package's own file (__init__.py, index.js, mod.rs) names its folder.
        select case when mod[cardinality(mod)] in ('__init__', 'index', 'mod') and cardinality(mod) > 1
                    then mod[1:cardinality(mod) - 1] else mod end as mod,
               segs[1:cardinality(segs) - 1] as dir,
               segs[cardinality(segs)] as file
        from parts
    )
    select array['path:' || p_path]
           || array(select 'module:' || array_to_string(t.mod[i:], '.')
                    from generate_series(1, cardinality(t.mod)) i where p_path ~ '\.[A-Za-z0-9]+$')
           || array(select 'package:' || array_to_string(t.dir[i:], '.')
                    from generate_series(1, cardinality(t.dir)) i)
           || coalesce(array(select 'adr:' || ltrim(m[1], '0')
                             from regexp_match(t.file, '^(?:adr[-_ ]?)?([0-9]{1,6})[-_.]', 'i') m
                             where p_path ~* '(adr|decision)' and ltrim(m[1], '0') <> ''), '{}')
    from trimmed t
$_$;


ALTER FUNCTION data._document_keys(p_path text) OWNER TO <migrator>;

--
-- Name: FUNCTION _document_keys(p_path text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._document_keys(p_path text) IS 'Keys a reference may name a document by: path:P, module:a.b (dotted suffixes of a code path), package:a.b (of its folder), adr:N (an ADR file''s number).';


--
-- Name: _find_duplicate(text, text, text, text, text, text, bigint, integer); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._find_duplicate(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespace text, p_content_hash text, p_simhash bigint, p_max_distance integer DEFAULT 3) RETURNS TABLE(fragment_id bigint, distance integer)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    with bands as (
        select ((p_simhash >> 48) & 65535)::int as b0, ((p_simhash >> 32) & 65535)::int as b1,
               ((p_simhash >> 16) & 65535)::int as b2, (p_simhash & 65535)::int as b3
    ), candidates as (
        select f.fragment_id, 0 as distance, 0 as preference
        from data.fragments f
        where f.org_id = p_org_id and f.content_hash = p_content_hash
          and f.namespace = p_namespace
          and f.repo_id is not distinct from p_repo_id
          and f.persona_id is not distinct from p_persona_id
          and f.session_id is not distinct from p_session_id
        union all
        select f.fragment_id, bit_count((f.simhash # p_simhash)::bit(64))::int, 1
        from data.fragments f, bands
        where f.org_id = p_org_id
          and (f.simhash_band0 = bands.b0 or f.simhash_band1 = bands.b1
               or f.simhash_band2 = bands.b2 or f.simhash_band3 = bands.b3)
          and f.active
          and f.namespace = p_namespace
          and f.repo_id is not distinct from p_repo_id
          and f.persona_id is not distinct from p_persona_id
          and f.session_id is not distinct from p_session_id
          and bit_count((f.simhash # p_simhash)::bit(64)) <= p_max_distance
    )
    select c.fragment_id, c.distance from candidates c
    order by c.preference, c.distance, c.fragment_id
    limit 1
$$;


ALTER FUNCTION data._find_duplicate(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespace text, p_content_hash text, p_simhash bigint, p_max_distance integer) OWNER TO <migrator>;

--
-- Name: _fuse(bigint[], integer[], double precision[], integer[], double precision[], text[], text[], boolean, boolean, jsonb, integer); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._fuse(p_ids bigint[], p_lexical_ranks integer[], p_lexical_scores double precision[], p_dense_ranks integer[], p_dense_scores double precision[], p_namespaces text[], p_models text[], p_lexical_on boolean, p_dense_on boolean, p_fusion jsonb, p_rrf_k integer) RETURNS TABLE(fragment_id bigint, lexical_rank integer, lexical_score double precision, dense_rank integer, dense_similarity double precision, lexical_norm double precision, dense_norm double precision, lexical_weight double precision, dense_weight double precision, fused_score double precision)
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    with completed as (
        select c.fragment_id, c.lexical_rank, c.lexical_score, c.dense_rank, c.dense_similarity,
               c.namespace, c.model
        from unnest(p_ids, p_lexical_ranks, p_lexical_scores, p_dense_ranks, p_dense_scores, p_namespaces, p_models)
             as c(fragment_id, lexical_rank, lexical_score, dense_rank, dense_similarity, namespace, model)
    ), calibrated as (
        select c.*,
               greatest(c.lexical_score, 0.0) / nullif(max(c.lexical_score) over (), 0.0) as lexical_norm,
               greatest(c.dense_similarity, 0.0)
                   / nullif(max(c.dense_similarity) over (partition by c.model), 0.0) as dense_norm,
               coalesce((p_fusion ->> 'dense_weight')::float8, 0.5) as w,
               coalesce((p_fusion -> 'lexical_weight' ->> c.namespace)::float8, 1.0) as f
        from completed c
    ), weighted as (
        -- Per namespace the two weights sum to 1 (lexical (1 - w) f and dense w, over
        -- their sum): a discounted namespace trades lexical evidence for dense evidence
        -- instead of losing reach, so its best candidate can still score 1, as another
        -- namespace's can (in a repository of code and docs, a discount that only took
        -- away let every Markdown page outrank the code a question was about).
        select c.*,
               case when not p_dense_on then 0.0 when not p_lexical_on then 1.0
                    else coalesce(c.w / nullif((1.0 - c.w) * c.f + c.w, 0.0), 0.0) end as w_dense,
               case when not p_lexical_on then 0.0 when not p_dense_on then 1.0
                    else coalesce((1.0 - c.w) * c.f / nullif((1.0 - c.w) * c.f + c.w, 0.0), 1.0) end as w_lexical
        from calibrated c
    )
    select c.fragment_id, c.lexical_rank, c.lexical_score, c.dense_rank, c.dense_similarity,
           c.lexical_norm, c.dense_norm, c.w_lexical, c.w_dense,
           case when p_fusion ->> 'method' = 'rrf'
                then coalesce(1.0::float8 / (p_rrf_k + c.lexical_rank), 0) + coalesce(1.0::float8 / (p_rrf_k + c.dense_rank), 0)
                else c.w_lexical * coalesce(c.lexical_norm, 0) + c.w_dense * coalesce(c.dense_norm, 0) end
    from weighted c
$$;


ALTER FUNCTION data._fuse(p_ids bigint[], p_lexical_ranks integer[], p_lexical_scores double precision[], p_dense_ranks integer[], p_dense_scores double precision[], p_namespaces text[], p_models text[], p_lexical_on boolean, p_dense_on boolean, p_fusion jsonb, p_rrf_k integer) OWNER TO <migrator>;

--
-- Name: _glob_regex(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._glob_regex(p_glob text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
    out text := '^';
    i int := 1;
    ch text;
begin
    while i <= length(p_glob) loop
        ch := substr(p_glob, i, 1);
        if substr(p_glob, i, 3) = '**/' then
            out := out || '(.*/)?';
            i := i + 3;
            continue;
        elsif substr(p_glob, i, 2) = '**' then
            out := out || '.*';
            i := i + 2;
            continue;
        elsif ch = '*' then
            out := out || '[^/]*';
        elsif ch = '?' then
            out := out || '[^/]';
        elsif strpos('[].^$+(){}|\', ch) > 0 then
            out := out || '\' || ch;
        else
            out := out || ch;
        end if;
        i := i + 1;
    end loop;
    return out || '$';
end
$_$;


ALTER FUNCTION data._glob_regex(p_glob text) OWNER TO <migrator>;

--
-- Name: FUNCTION _glob_regex(p_glob text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._glob_regex(p_glob text) IS 'A path glob (**, *, ?) as an anchored regular expression.';


--
-- Name: _grant_target(text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._grant_target(p_org_id text, p_scope_kind text, p_scope_id text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$ select case when p_scope_kind in ('org', 'audit') then coalesce(p_scope_id, p_org_id) else p_scope_id end $$;


ALTER FUNCTION data._grant_target(p_org_id text, p_scope_kind text, p_scope_id text) OWNER TO <migrator>;

--
-- Name: _in_scope(text, text, text, text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._in_scope(fragment_repo text, fragment_persona text, fragment_session text, want_repo text, want_persona text, want_session text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    select (fragment_repo is null or want_repo is null or fragment_repo = want_repo)
       and (fragment_persona is null or fragment_persona = want_persona)
       and (fragment_session is null or fragment_session = want_session)
$$;


ALTER FUNCTION data._in_scope(fragment_repo text, fragment_persona text, fragment_session text, want_repo text, want_persona text, want_session text) OWNER TO <migrator>;

--
-- Name: _json_number(jsonb); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._json_number(p_value jsonb) RETURNS double precision
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select case when jsonb_typeof(p_value) = 'number' then (p_value #>> '{}')::float8 end $$;


ALTER FUNCTION data._json_number(p_value jsonb) OWNER TO <migrator>;

--
-- Name: _metadata_problem(jsonb); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._metadata_problem(p_metadata jsonb) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
    k text;
begin
    if jsonb_typeof(p_metadata) is distinct from 'object' then
        return 'metadata must be a JSON object';
    end if;
    if octet_length(p_metadata::text) > 32768 then
        return format('metadata is %s bytes as JSON; at most 32768 are stored', octet_length(p_metadata::text));
    end if;
    -- A container at level 32 (the object itself at 0) is a 33rd level of nesting.
    if jsonb_path_exists(p_metadata, 'strict $.**{32} ? (@.type() == "object" || @.type() == "array")') then
        return 'metadata is nested more than 32 levels deep';
    end if;
    if jsonb_path_exists(p_metadata,
           'strict $.** ? (@.type() == "number" && (@ > 1.7976931348623157e308 || @ < -1.7976931348623157e308))') then
        return 'metadata holds a number beyond what a double holds (about 1.8e308)';
    end if;
    foreach k in array array['valid_from', 'valid_until'] loop
        if jsonb_typeof(p_metadata -> k) = 'string' and pg_input_is_valid(p_metadata ->> k, 'timestamptz')
           and not ((p_metadata ->> k)::timestamptz >= '0001-01-02 00:00:00+00'::timestamptz
                    and (p_metadata ->> k)::timestamptz < '9999-12-31 00:00:00+00'::timestamptz) then
            return format('metadata %s %s is outside the times every reader can decode: from 0001-01-02 to 9999-12-30 (UTC)',
                          k, p_metadata ->> k);
        end if;
    end loop;
    return null;
end
$_$;


ALTER FUNCTION data._metadata_problem(p_metadata jsonb) OWNER TO <migrator>;

--
-- Name: FUNCTION _metadata_problem(p_metadata jsonb); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._metadata_problem(p_metadata jsonb) IS 'Why a document''s metadata may not be stored (null when it may): not an object, over 32 KiB, nested over 32 levels, a number beyond a double, or a validity time no reader can decode.';


--
-- Name: _metadata_time(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._metadata_time(p_value text) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    select case when p_value is not null and pg_input_is_valid(p_value, 'timestamptz')
                then p_value::timestamptz end
$$;


ALTER FUNCTION data._metadata_time(p_value text) OWNER TO <migrator>;

--
-- Name: FUNCTION _metadata_time(p_value text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._metadata_time(p_value text) IS 'A metadata value as a time; null when absent or not a time.';


--
-- Name: _on_sources_deleted(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._on_sources_deleted() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    touched bigint[] := array(select distinct g.fragment_id from gone g);
begin
    delete from data.fragments f
    where f.fragment_id = any(touched)
      and not exists (select 1 from data.fragment_sources s where s.fragment_id = f.fragment_id);
    perform data._deactivate_unsourced(touched);
    return null;
end
$$;


ALTER FUNCTION data._on_sources_deleted() OWNER TO <migrator>;

--
-- Name: _path_problem(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._path_problem(p_path text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    select case
        when p_path is null or p_path = '' then 'a document needs a path'
        when length(p_path) > 1024 then format('a path of %s characters is over the 1024-character limit', length(p_path))
        when p_path ~ '[\u0001-\u001f\u007f-\u009f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]'
            then format('path %s contains a control or invisible formatting character', to_json(p_path))
        when p_path is not nfc normalized then format('path %s is not in Unicode normal form C', to_json(p_path))
        when strpos(p_path, '\') > 0 then format('path %s contains a backslash (separate segments with /)', to_json(p_path))
        when exists (select 1 from unnest(string_to_array(p_path, '/')) s(segment) where s.segment in ('', '.'))
            then format('path %s has an empty or "." segment (a leading, trailing or doubled /)', to_json(p_path))
        when exists (select 1 from unnest(string_to_array(p_path, '/')) s(segment)
                     where regexp_replace(s.segment, '^[ \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+|[ \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+$', '', 'g')
                           in ('', '..'))
            then format('path %s has a blank or ".." segment', to_json(p_path))
    end
$_$;


ALTER FUNCTION data._path_problem(p_path text) OWNER TO <migrator>;

--
-- Name: FUNCTION _path_problem(p_path text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._path_problem(p_path text) IS 'Why a document path may not be stored (null when it may): what app.ingest.normalize.normalize_path would change or refuse.';


--
-- Name: _principal_or_raise(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._principal_or_raise(OUT org_id text, OUT principal_id text) RETURNS record
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    select c.org_id, c.principal_id into org_id, principal_id from data.current_principal() c;
    if org_id is null then
        raise exception 'no principal is bound to this transaction' using errcode = '42501',
            hint = 'Authenticate with an API key (HTTP), pass --principal (CLI), or log in as a mapped role (SQL).';
    end if;
end
$$;


ALTER FUNCTION data._principal_or_raise(OUT org_id text, OUT principal_id text) OWNER TO <migrator>;

--
-- Name: _query_vectors(jsonb); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._query_vectors(p_query_embeddings jsonb) RETURNS TABLE(model_id integer, namespace text, dims integer, query_vector extensions.vector)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    m record;
begin
    if jsonb_typeof(p_query_embeddings) is distinct from 'object' then
        raise exception 'query embeddings must be a JSON object keyed by namespace' using errcode = '22023';
    end if;
    for m in
        select em.model_id, em.namespace, em.name, em.generation, em.dims from data._serving_models() em
        where p_query_embeddings ? em.namespace
        order by em.namespace
    loop
        if jsonb_typeof(p_query_embeddings -> '_models' -> m.namespace) = 'string'
           and p_query_embeddings -> '_models' ->> m.namespace <> m.name then
            raise exception 'namespace % is served by % (generation %), not by %', m.namespace, m.name, m.generation,
                p_query_embeddings -> '_models' ->> m.namespace using errcode = '55000',
                hint = 'The namespace was promoted to another model: the service loads it from its recorded source (its log says why when it cannot).';
        end if;
        if jsonb_typeof(p_query_embeddings -> m.namespace) is distinct from 'array'
           or jsonb_array_length(p_query_embeddings -> m.namespace) <> m.dims then
            raise exception 'query embedding for namespace % must have % dimensions', m.namespace, m.dims
                using errcode = '22023';
        end if;
        return query select m.model_id, m.namespace, m.dims, (p_query_embeddings -> m.namespace)::text::vector;
    end loop;
end
$$;


ALTER FUNCTION data._query_vectors(p_query_embeddings jsonb) OWNER TO <migrator>;

--
-- Name: _ranking_profile(text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._ranking_profile(p_org_id text, p_persona_id text) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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


ALTER FUNCTION data._ranking_profile(p_org_id text, p_persona_id text) OWNER TO <migrator>;

--
-- Name: _readable_context_versions(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._readable_context_versions() RETURNS TABLE(context_id bigint, version integer, via_subscription boolean)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$ select * from data._context_versions(false) $$;


ALTER FUNCTION data._readable_context_versions() OWNER TO <migrator>;

--
-- Name: FUNCTION _readable_context_versions(); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._readable_context_versions() IS 'Context versions the current principal may read: every version of a Context whose scope its grants cover, and the version each live subscription of its org (or repo) gives it.';


--
-- Name: _readable_fragments(text, bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._readable_fragments(p_org_id text, p_ids bigint[]) RETURNS bigint[]
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    select coalesce(array_agg(f.fragment_id order by f.fragment_id), '{}')
    from data.fragments f
    where f.org_id = p_org_id
      and f.org_id = (select data.acl_org())
      and f.fragment_id = any (p_ids)
      and (f.repo_id is null or (select data.acl_org_wide())
           or f.repo_id = any ((select data.acl_repos())::text[]))
      and (f.persona_id is null or (select data.acl_org_wide())
           or f.persona_id = any ((select data.acl_personas())::text[]))
      and (f.session_id is null or f.session_id = any ((select data.acl_sessions())::text[]))
$$;


ALTER FUNCTION data._readable_fragments(p_org_id text, p_ids bigint[]) OWNER TO <migrator>;

--
-- Name: FUNCTION _readable_fragments(p_org_id text, p_ids bigint[]); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._readable_fragments(p_org_id text, p_ids bigint[]) IS 'Fragments among the given ids the current principal may read now (the data.fragments policy).';


--
-- Name: _readable_time(timestamp with time zone, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._readable_time(p_value timestamp with time zone, p_what text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    if p_value is null
       or (p_value >= '0001-01-02 00:00:00+00'::timestamptz and p_value < '9999-12-31 00:00:00+00'::timestamptz) then
        return true;
    end if;
    raise exception '% % is outside the times every reader can decode: from 0001-01-02 to 9999-12-30 (UTC)',
        p_what, p_value using errcode = '22023';
end
$$;


ALTER FUNCTION data._readable_time(p_value timestamp with time zone, p_what text) OWNER TO <migrator>;

--
-- Name: FUNCTION _readable_time(p_value timestamp with time zone, p_what text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._readable_time(p_value timestamp with time zone, p_what text) IS 'True for null or a time from 0001-01-02 to 9999-12-30 UTC (what every reader, in any time zone, decodes); raises 22023 naming p_what otherwise. Checked on every time column of the data schema.';


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: documents; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.documents (
    doc_id bigint NOT NULL,
    org_id text NOT NULL,
    repo_id text,
    persona_id text,
    session_id text,
    path text NOT NULL,
    kind text NOT NULL,
    current_version integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    owner text,
    deleted_at timestamp with time zone,
    deleted_by text,
    link_keys text[] GENERATED ALWAYS AS (data._document_keys(path)) STORED,
    owner_source text DEFAULT 'document'::text NOT NULL,
    CONSTRAINT documents_created_at_readable CHECK (data._readable_time(created_at, 'documents.created_at'::text)),
    CONSTRAINT documents_deleted_at_readable CHECK (data._readable_time(deleted_at, 'documents.deleted_at'::text)),
    CONSTRAINT documents_kind_check CHECK ((kind ~ '^[a-z][a-z0-9-]{0,31}$'::text)),
    CONSTRAINT documents_owner_source_known CHECK ((owner_source = ANY (ARRAY['document'::text, 'codeowners'::text, 'default'::text, 'reassigned'::text, 'none'::text]))),
    CONSTRAINT documents_path_check CHECK (((length(path) >= 1) AND (length(path) <= 1024))),
    CONSTRAINT documents_updated_at_readable CHECK (data._readable_time(updated_at, 'documents.updated_at'::text))
);

ALTER TABLE ONLY data.documents FORCE ROW LEVEL SECURITY;


ALTER TABLE data.documents OWNER TO <migrator>;

--
-- Name: TABLE documents; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.documents IS 'Sources (files, ADRs, transcripts, agent output), identified by org, scope and path.';


--
-- Name: COLUMN documents.current_version; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.documents.current_version IS 'Version whose fragments are live; older versions are kept.';


--
-- Name: COLUMN documents.owner; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.documents.owner IS 'Named owner of the current version (R-DOC-3); its fragments carry it too.';


--
-- Name: COLUMN documents.deleted_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.documents.deleted_at IS 'Set by api.delete_document: the document is gone from listings and retrieval; its versions and sources stay for audit.';


--
-- Name: COLUMN documents.deleted_by; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.documents.deleted_by IS 'Principal that deleted the document.';


--
-- Name: COLUMN documents.link_keys; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.documents.link_keys IS 'Keys references name this document by (data._document_keys): how a waiting reference finds it.';


--
-- Name: COLUMN documents.owner_source; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.documents.owner_source IS 'Where the owner came from: document (front matter, metadata, --owner, request), codeowners (the repo''s CODEOWNERS), default (the org''s), reassigned (contexts owners reassign), none.';


--
-- Name: _record_links(data.documents, jsonb); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._record_links(p_doc data.documents, p_links jsonb) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    ids bigint[];
begin
    delete from data.fragment_links l where l.doc_id = p_doc.doc_id;
    with refs as (
        select (c->>'fragment_id')::bigint as fragment_id, r
        from jsonb_array_elements(p_links) c, jsonb_array_elements(coalesce(c->'references', '[]')) r
    ), inserted as (
        insert into data.fragment_links (org_id, fragment_id, repo_id, persona_id, session_id, doc_id, link_type,
                                         target, target_key, target_name, target_anchor, target_repo)
        select distinct p_doc.org_id, r.fragment_id, p_doc.repo_id, p_doc.persona_id, p_doc.session_id, p_doc.doc_id,
               r.r->>'type', left(r.r->>'target', 2048), left(r.r->>'key', 2048), r.r->>'name',
               r.r->>'anchor', r.r->>'repo'
        from refs r
        on conflict do nothing
        returning link_id
    )
    select coalesce(array_agg(link_id), '{}') into ids from inserted;
    ids := ids || array(select l.link_id from data.fragment_links l
                        where l.org_id = p_doc.org_id
                          and (l.target_key = any (p_doc.link_keys)
                               or l.target_doc_id = p_doc.doc_id)
                          and l.doc_id <> p_doc.doc_id);
    return data._resolve_links(ids);
end
$$;


ALTER FUNCTION data._record_links(p_doc data.documents, p_links jsonb) OWNER TO <migrator>;

--
-- Name: _record_returns(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._record_returns() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
begin
    -- One jsonpath filter over the candidates (strict: an entry of another shape is
    -- skipped, never an error): 2.5x cheaper than expanding every entry in SQL.
    insert into data.fragment_returns (org_id, trace_id, fragment_id, returned_at)
    select distinct new.org_id, new.trace_id, (x #>> '{}')::bigint, new.created_at
    from jsonb_path_query(
             case when jsonb_typeof(new.candidates) = 'array' then new.candidates else '[]' end,
             'strict $[*] ? (@.type() == "object" && @.included == true
                             && @.fragment_id.type() == "number").fragment_id') x
    where x #>> '{}' ~ '^[0-9]{1,18}$'
    on conflict do nothing;
    return null;
end
$_$;


ALTER FUNCTION data._record_returns() OWNER TO <migrator>;

--
-- Name: _redact_candidates(text, jsonb); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._redact_candidates(p_org_id text, p_candidates jsonb) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $_$
    with listed as (
        select e.c, e.n,
               case when jsonb_typeof(e.c -> 'fragment_id') = 'number' and e.c ->> 'fragment_id' ~ '^[0-9]{1,18}$'
                    then (e.c ->> 'fragment_id')::bigint end as fragment_id
        from jsonb_array_elements(case when jsonb_typeof(p_candidates) = 'array' then p_candidates else '[]' end)
             with ordinality as e(c, n)
    ), readable as materialized (
        -- Materialized: a plain subquery would be pulled up and the look-up evaluated
        -- once per candidate instead of once per trace (7x the cost of a whole trace).
        select data._readable_fragments(p_org_id, array(select l.fragment_id from listed l
                                                         where l.fragment_id is not null)) as ids
    )
    select coalesce(jsonb_agg(
               case when l.fragment_id = any (r.ids) and jsonb_typeof(l.c) = 'object'
                    then l.c || '{"redacted": false}'
                    else coalesce((select jsonb_object_agg(k.key, k.value) from jsonb_each(
                                       case when jsonb_typeof(l.c) = 'object' then l.c else '{}' end) k
                                   where k.key in ('fused_rank', 'lexical_rank', 'lexical_score', 'dense_rank',
                                                   'dense_similarity', 'lexical_norm', 'dense_norm',
                                                   'lexical_weight', 'dense_weight', 'fused_score', 'rerank_score',
                                                   'freshness', 'terms', 'final_rank', 'final_score', 'relevance',
                                                   'included', 'reason')),
                                  '{}') || '{"redacted": true}'
               end order by l.n), '[]')
    from listed l cross join readable r
$_$;


ALTER FUNCTION data._redact_candidates(p_org_id text, p_candidates jsonb) OWNER TO <migrator>;

--
-- Name: FUNCTION _redact_candidates(p_org_id text, p_candidates jsonb); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._redact_candidates(p_org_id text, p_candidates jsonb) IS 'A trace''s candidates for the current principal: unreadable ones reduced to ranks, scores and fate.';


--
-- Name: _redact_request(text, text, jsonb, boolean, text[], text[], text[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._redact_request(p_org_id text, p_query text, p_request jsonb, p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[], OUT query text, OUT request jsonb, OUT redacted text[]) RETURNS record
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    knobs constant text[] := array['budget_tokens', 'k_lexical', 'k_dense', 'rerank_top',
                                   'freshness_halflife_days', 'min_score', 'top_k', 'min_relevance',
                                   'negatives', 'include_superseded', 'expand_links', 'context_mode'];
    scope jsonb := case when jsonb_typeof(p_request -> 'scope') = 'object' then p_request -> 'scope' else '{}' end;
    hidden text[] := '{}';
    k text;
begin
    if scope ? 'org_id' and scope ->> 'org_id' is distinct from p_org_id then
        hidden := hidden || 'org_id'::text;
    end if;
    if scope ->> 'repo_id' is not null
       and not (coalesce(p_org_wide, false) or scope ->> 'repo_id' = any (coalesce(p_repos, '{}'))) then
        hidden := hidden || 'repo_id'::text;
    end if;
    if scope ->> 'persona_id' is not null
       and not (coalesce(p_org_wide, false) or scope ->> 'persona_id' = any (coalesce(p_personas, '{}'))) then
        hidden := hidden || 'persona_id'::text;
    end if;
    if scope ->> 'session_id' is not null and not (scope ->> 'session_id' = any (coalesce(p_sessions, '{}'))) then
        hidden := hidden || 'session_id'::text;
    end if;
    if cardinality(hidden) = 0 then
        query := p_query;
        request := p_request;
        redacted := '{}';
        return;
    end if;
    query := null;
    redacted := array['query', 'request.query'];
    scope := jsonb_build_object('org_id', scope -> 'org_id', 'repo_id', scope -> 'repo_id',
                                'persona_id', scope -> 'persona_id', 'session_id', scope -> 'session_id');
    foreach k in array hidden loop
        scope := jsonb_set(scope, array[k], 'null');
        redacted := redacted || ('request.scope.' || k);
    end loop;
    request := jsonb_build_object('query', null, 'scope', scope);
    for k in select j.key from jsonb_each(p_request) j order by j.key loop
        -- Knobs stay; so does a filter left unset (null tells nothing); any other field
        -- (a path prefix, kinds, a time window) is withheld and listed.
        if k = any (knobs) or jsonb_typeof(p_request -> k) = 'null' then
            request := request || jsonb_build_object(k, p_request -> k);
        elsif k not in ('query', 'scope') then
            redacted := redacted || ('request.' || k);
        end if;
    end loop;
end
$$;


ALTER FUNCTION data._redact_request(p_org_id text, p_query text, p_request jsonb, p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[], OUT query text, OUT request jsonb, OUT redacted text[]) OWNER TO <migrator>;

--
-- Name: FUNCTION _redact_request(p_org_id text, p_query text, p_request jsonb, p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[], OUT query text, OUT request jsonb, OUT redacted text[]); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._redact_request(p_org_id text, p_query text, p_request jsonb, p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[], OUT query text, OUT request jsonb, OUT redacted text[]) IS 'A recorded request as a reader with the given grants may see it: withheld query and scope ids, listed.';


--
-- Name: _refresh_validity(text, bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._refresh_validity(p_org_id text, p_doc_ids bigint[]) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    touched bigint[];
    fragment_ids bigint[];
    doc_ids bigint[];
    changed int;
begin
    touched := array(
        select unnest(p_doc_ids)
        union
        select l.target_doc_id from data.fragment_links l
        where l.doc_id = any (p_doc_ids) and l.link_type in ('supersedes', 'superseded_by')
          and l.target_doc_id is not null
        union
        select l.doc_id from data.fragment_links l
        where l.target_doc_id = any (p_doc_ids) and l.link_type in ('supersedes', 'superseded_by'));
    -- Fragments whose window may have changed (a deleted document's last version, and a
    -- new version's previous one, included: fragments they left may be cited elsewhere,
    -- under another window now), and every live document citing them.
    fragment_ids := array(
        select distinct s.fragment_id from data.fragment_sources s
        join data.documents d on d.doc_id = s.doc_id
        where s.doc_id = any (touched) and (s.retired_at is null or s.doc_version >= d.current_version - 1));
    doc_ids := array(
        select distinct s.doc_id from data.fragment_sources s
        where s.fragment_id = any (fragment_ids) and s.retired_at is null);
    if not exists (select 1 from data.fragment_links l
                   where l.link_type in ('supersedes', 'superseded_by')
                     and (l.doc_id = any (doc_ids) or l.target_doc_id = any (doc_ids)))
       and not exists (select 1 from data.documents d
                       join data.document_versions v on v.doc_id = d.doc_id and v.version = d.current_version
                       where d.doc_id = any (doc_ids) and (v.metadata ? 'valid_from' or v.metadata ? 'valid_until'))
       and not exists (select 1 from data.fragments f
                       where f.fragment_id = any (fragment_ids) and (f.valid_from is not null or f.valid_until is not null))
    then
        return 0;
    end if;

    with said as (
        -- Live supersession claims: (superseding document, superseded document), made by
        -- a live fragment of the current version of the document that says it.
        select case l.link_type when 'supersedes' then l.doc_id else l.target_doc_id end as newer,
               case l.link_type when 'supersedes' then l.target_doc_id else l.doc_id end as older
        from (select l.* from data.fragment_links l
              where l.link_type in ('supersedes', 'superseded_by') and l.doc_id = any (doc_ids)
              union
              select l.* from data.fragment_links l
              where l.link_type in ('supersedes', 'superseded_by') and l.target_doc_id = any (doc_ids)) l
        where l.org_id = p_org_id and l.target_doc_id is not null
          and exists (select 1 from data.fragment_sources s join data.documents d on d.doc_id = s.doc_id
                      where s.fragment_id = l.fragment_id and s.doc_id = l.doc_id and s.retired_at is null
                        and s.doc_version = d.current_version and d.deleted_at is null)
    ), starts as (
        select d.doc_id, d.repo_id, d.persona_id, d.session_id,
               data._metadata_time(v.metadata ->> 'valid_from') as valid_from,
               data._metadata_time(v.metadata ->> 'valid_until') as valid_until,
               v.created_at as written_at
        from data.documents d
        join data.document_versions v on v.doc_id = d.doc_id and v.version = d.current_version
        where d.doc_id = any (doc_ids || array(select s.newer from said s))
          and d.org_id = p_org_id and d.deleted_at is null
    ), windows as (
        select o.doc_id, o.valid_from,
               least(o.valid_until,
                     (select min(coalesce(n.valid_from, n.written_at))
                      from said s join starts n on n.doc_id = s.newer
                      where s.older = o.doc_id and s.newer <> o.doc_id
                        and (n.repo_id is null or n.repo_id is not distinct from o.repo_id)
                        and (n.persona_id is null or n.persona_id is not distinct from o.persona_id)
                        and (n.session_id is null or n.session_id is not distinct from o.session_id))) as valid_until
        from starts o
        where o.doc_id = any (doc_ids)
    ), computed as (
        select s.fragment_id,
               case when bool_or(w.valid_from is null) then null else min(w.valid_from) end as valid_from,
               case when bool_or(w.valid_until is null) then null else max(w.valid_until) end as valid_until
        from data.fragment_sources s
        join windows w on w.doc_id = s.doc_id
        where s.fragment_id = any (fragment_ids) and s.retired_at is null
        group by s.fragment_id
    )
    update data.fragments f set valid_from = c.valid_from, valid_until = c.valid_until
    from computed c
    where f.fragment_id = c.fragment_id and f.org_id = p_org_id
      and (f.valid_from is distinct from c.valid_from or f.valid_until is distinct from c.valid_until);
    get diagnostics changed = row_count;
    return changed;
end
$$;


ALTER FUNCTION data._refresh_validity(p_org_id text, p_doc_ids bigint[]) OWNER TO <migrator>;

--
-- Name: FUNCTION _refresh_validity(p_org_id text, p_doc_ids bigint[]); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._refresh_validity(p_org_id text, p_doc_ids bigint[]) IS 'Recompute the validity windows of the fragments of these documents and of the documents they supersede or are superseded by.';


--
-- Name: _require_org(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._require_org(p_org_id text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    if p_org_id is null or not exists (select 1 from data.orgs o where o.org_id = p_org_id) then
        raise exception 'unknown org: %', coalesce(p_org_id, '(null)')
            using errcode = 'P0002', hint = 'Create it with `contexts org create ORG`.';
    end if;
end
$$;


ALTER FUNCTION data._require_org(p_org_id text) OWNER TO <migrator>;

--
-- Name: _require_principal(text, text, boolean); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._require_principal(p_org_id text, p_principal_id text, p_enabled boolean DEFAULT false) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    perform data._require_org(p_org_id);
    if not exists (select 1 from data.principals p
                   where p.org_id = p_org_id and p.principal_id = p_principal_id
                     and (p.disabled_at is null or not p_enabled)) then
        raise exception 'unknown principal % in org %', p_principal_id, p_org_id using errcode = 'P0002',
            hint = 'Create it with `contexts principal create ORG PRINCIPAL`.';
    end if;
end
$$;


ALTER FUNCTION data._require_principal(p_org_id text, p_principal_id text, p_enabled boolean) OWNER TO <migrator>;

--
-- Name: _require_read(text, text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._require_read(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    me record;
begin
    select * into me from data.current_principal();
    if me.org_id is null then
        if data._bypasses_rls() then
            perform data._require_org(p_org_id);
            return;
        end if;
        perform data._principal_or_raise();
    end if;
    if p_org_id is distinct from me.org_id then
        raise exception 'principal % may not read org %', me.principal_id, p_org_id using errcode = '42501';
    end if;
    if p_repo_id is not null and not (data.acl_org_wide() or p_repo_id = any(data.acl_repos())) then
        raise exception 'principal % holds no grant on repo %', me.principal_id, p_repo_id using errcode = '42501';
    end if;
    if p_persona_id is not null and not (data.acl_org_wide() or p_persona_id = any(data.acl_personas())) then
        raise exception 'principal % holds no grant on persona %', me.principal_id, p_persona_id using errcode = '42501';
    end if;
    if p_session_id is not null and not (p_session_id = any(data.acl_sessions())) then
        raise exception 'principal % holds no grant on a live session %', me.principal_id, p_session_id
            using errcode = '42501';
    end if;
end
$$;


ALTER FUNCTION data._require_read(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) OWNER TO <migrator>;

--
-- Name: _require_rls_login(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._require_rls_login(p_login text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    if exists (select 1 from pg_roles r
               where r.rolname = p_login
                 and (r.rolsuper or r.rolbypassrls or exists (
                        select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace
                        where c.relowner = r.oid and n.nspname in ('data', 'api')))) then
        raise exception 'login % bypasses row-level security (superuser, BYPASSRLS or owner): it cannot be an analyst',
            p_login using errcode = '22023';
    end if;
end
$$;


ALTER FUNCTION data._require_rls_login(p_login text) OWNER TO <migrator>;

--
-- Name: _require_scope(text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._require_scope(p_org_id text, p_repo_id text, p_persona_id text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
begin
    if p_repo_id is not null
       and not exists (select 1 from data.repos r where r.org_id = p_org_id and r.repo_id = p_repo_id) then
        raise exception 'unknown repo % in org %', p_repo_id, p_org_id using errcode = 'P0002';
    end if;
    if p_persona_id is not null
       and not exists (select 1 from data.personas p where p.org_id = p_org_id and p.persona_id = p_persona_id) then
        raise exception 'unknown persona % in org %', p_persona_id, p_org_id using errcode = 'P0002';
    end if;
end
$$;


ALTER FUNCTION data._require_scope(p_org_id text, p_repo_id text, p_persona_id text) OWNER TO <migrator>;

--
-- Name: _require_scram(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._require_scram(p_verifier text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
begin
    if p_verifier is null or p_verifier !~ '^SCRAM-SHA-256\$[0-9]+:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$' then
        raise exception 'a login''s password is given as its SCRAM-SHA-256 verifier, never in clear'
            using errcode = '22023';
    end if;
    return p_verifier;
end
$_$;


ALTER FUNCTION data._require_scram(p_verifier text) OWNER TO <migrator>;

--
-- Name: _require_write(text, text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._require_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    me record;
    org_write boolean;
begin
    select * into me from data._principal_or_raise();
    if p_org_id is distinct from me.org_id then
        raise exception 'principal % may not write to org %', me.principal_id, p_org_id using errcode = '42501';
    end if;
    org_write := cardinality(data._acl('org', true)) > 0;
    if p_session_id is not null then
        if not exists (select 1 from data.sessions s where s.org_id = p_org_id and s.session_id = p_session_id) then
            perform api.open_session(p_session_id);  -- refused unless the principal may write somewhere
        end if;
        if not p_session_id = any(data._acl('session', true)) then
            raise exception 'principal % may not write to session %', me.principal_id, p_session_id
                using errcode = '42501';
        end if;
    end if;
    if p_repo_id is not null and not (org_write or p_repo_id = any(data._acl('repo', true))) then
        raise exception 'principal % may not write to repo %', me.principal_id, p_repo_id using errcode = '42501';
    end if;
    if p_persona_id is not null and not (org_write or p_persona_id = any(data._acl('persona', true))) then
        raise exception 'principal % may not write to persona %', me.principal_id, p_persona_id using errcode = '42501';
    end if;
    if p_repo_id is null and p_persona_id is null and p_session_id is null and not org_write then
        raise exception 'principal % may not write org-wide knowledge in %', me.principal_id, p_org_id
            using errcode = '42501';
    end if;
end
$$;


ALTER FUNCTION data._require_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) OWNER TO <migrator>;

--
-- Name: _resolve_context_refs(text[], boolean, text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._resolve_context_refs(p_refs text[], p_scoped boolean DEFAULT false, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text) RETURNS TABLE(ordinal integer, ref text, context_id bigint, version integer, retired boolean, name text, via_subscription boolean)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $_$
declare
    r record;
    parts text[];
    id bigint;
    v int;
    shared boolean;
begin
    if p_refs is null or cardinality(p_refs) = 0 or cardinality(p_refs) > 16 then
        raise exception 'name 1 to 16 contexts' using errcode = '22023';
    end if;
    for r in select x.ref, x.n from unnest(p_refs) with ordinality as x(ref, n) loop
        parts := regexp_match(coalesce(r.ref, ''), '^ctx_([1-9][0-9]{0,17})@([1-9][0-9]{0,8}|latest)$');
        if parts is null then
            raise exception 'malformed context reference: % (expected ctx_<id>@<version> or ctx_<id>@latest)',
                coalesce(left(r.ref, 64), 'null') using errcode = '22023';
        end if;
        id := parts[1]::bigint;
        -- The newest matching version; read through its own scope when both give it.
        select rv.version, bool_and(rv.via_subscription) into v, shared
        from data._context_versions(p_scoped, p_repo_id, p_persona_id, p_session_id) rv
        where rv.context_id = id and (parts[2] = 'latest' or rv.version = parts[2]::int)
        group by rv.version order by rv.version desc limit 1;
        if v is null and p_scoped and exists (
                select 1 from data._context_versions(false) rv
                where rv.context_id = id and (parts[2] = 'latest' or rv.version = parts[2]::int)) then
            raise exception 'context % lies outside the requested scope', r.ref using errcode = '22023',
                hint = 'Name its scope in the request (its repo, persona or session; a subscription''s repo), or read it by reference.';
        end if;
        if v is null then
            raise exception 'unknown context: %', r.ref using errcode = 'P0002';
        end if;
        return query select r.n::int, 'ctx_' || id || '@' || v, id, v, c.retired_at is not null, c.name, shared
                     from data.contexts c where c.context_id = id;
    end loop;
end
$_$;


ALTER FUNCTION data._resolve_context_refs(p_refs text[], p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text) OWNER TO <migrator>;

--
-- Name: _resolve_links(bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._resolve_links(p_link_ids bigint[]) RETURNS integer
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    with links as materialized (
        select l.link_id, l.org_id, l.fragment_id, l.repo_id, l.persona_id, l.session_id, l.target_key,
               l.target_name, l.target_anchor, l.target_repo
        from data.fragment_links l
        where l.link_id = any (p_link_ids)
    ), keyed as materialized (
        -- The live documents holding any of these keys, once per key they hold: one
        -- pass over documents however many links name the same one.
        select distinct d.doc_id, d.org_id, d.repo_id, d.persona_id, d.session_id, d.path, d.current_version, k.key
        from data.documents d
        cross join lateral unnest(d.link_keys) as k(key)
        where d.org_id = any (array(select distinct l.org_id from links l))
          and d.link_keys && array(select distinct l.target_key from links l)
          and d.deleted_at is null
          and k.key in (select l.target_key from links l)
    ), live as materialized (
        -- Their current versions' live fragments, each read once.
        select s.doc_id, s.ordinal, s.anchor, f.fragment_id, f.symbol, f.repo_id, f.persona_id, f.session_id
        from (select distinct k.doc_id, k.current_version from keyed k) k
        join data.fragment_sources s on s.doc_id = k.doc_id and s.doc_version = k.current_version and s.retired_at is null
        join data.fragments f on f.fragment_id = s.fragment_id and f.org_id = s.org_id and f.active
    ), ranked as (
        select distinct on (l.link_id) l.link_id, d.doc_id, f.fragment_id, f.repo_id, f.persona_id, f.session_id
        from links l
        join keyed d on d.org_id = l.org_id and d.key = l.target_key
                    and (l.target_repo is null or d.repo_id = l.target_repo)
        join live f on f.doc_id = d.doc_id and f.fragment_id <> l.fragment_id
                   and (l.target_name is null or f.symbol = l.target_name
                        or starts_with(f.symbol, l.target_name || '.'))
        order by l.link_id,
                 (d.repo_id is not distinct from l.repo_id and d.persona_id is not distinct from l.persona_id
                  and d.session_id is not distinct from l.session_id) desc,
                 ((d.repo_id is null or d.repo_id = l.repo_id) and (d.persona_id is null or d.persona_id = l.persona_id)
                  and (d.session_id is null or d.session_id = l.session_id)) desc,
                 (d.repo_id is not null)::int + (d.persona_id is not null)::int + (d.session_id is not null)::int,
                 length(d.path), d.doc_id,
                 (l.target_anchor is not null and f.anchor = l.target_anchor) desc,
                 f.symbol is not distinct from l.target_name desc, f.ordinal
    ), resolved as (
        select l.link_id, r.doc_id, r.fragment_id, r.repo_id, r.persona_id, r.session_id
        from links l
        left join ranked r on r.link_id = l.link_id
    ), updated as (
        update data.fragment_links l
        set target_doc_id = r.doc_id, target_fragment_id = r.fragment_id, target_repo_id = r.repo_id,
            target_persona_id = r.persona_id, target_session_id = r.session_id,
            resolved_at = case when r.fragment_id is null then null else now() end
        from resolved r
        where l.link_id = r.link_id
          and (l.target_fragment_id is distinct from r.fragment_id or l.target_doc_id is distinct from r.doc_id)
        returning 1
    )
    select count(*)::int from updated
$$;


ALTER FUNCTION data._resolve_links(p_link_ids bigint[]) OWNER TO <migrator>;

--
-- Name: _resolve_owner(text, text, text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._resolve_owner(p_org_id text, p_owner text, p_source text, p_current_owner text, p_current_source text, OUT owner text, OUT owner_source text) RETURNS record
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    if p_source is not null and p_source not in ('document', 'codeowners') then
        raise exception 'an ingested owner comes from the document or from CODEOWNERS, not %', p_source
            using errcode = '22023';
    end if;
    if p_owner is not null and (length(p_owner) not between 1 and 256 or p_owner ~ '[[:cntrl:]]') then
        raise exception 'an owner is a name of 1 to 256 characters without control characters' using errcode = '22023';
    end if;
    if p_owner is not null and coalesce(p_source, 'document') = 'document' then
        owner := p_owner;
        owner_source := 'document';
    elsif p_current_source in ('document', 'reassigned') and p_current_owner is not null then
        owner := p_current_owner;
        owner_source := p_current_source;
    elsif p_owner is not null then
        owner := p_owner;
        owner_source := 'codeowners';
    else
        select o.default_owner into owner from data.orgs o where o.org_id = p_org_id;
        owner_source := case when owner is null then 'none' else 'default' end;
        owner := coalesce(owner, 'unowned');
    end if;
end
$$;


ALTER FUNCTION data._resolve_owner(p_org_id text, p_owner text, p_source text, p_current_owner text, p_current_source text, OUT owner text, OUT owner_source text) OWNER TO <migrator>;

--
-- Name: _retire_sources(bigint, integer); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._retire_sources(p_doc_id bigint, p_keep_version integer) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    affected bigint[];
    detached jsonb;
begin
    with retired as (
        update data.fragment_sources s set retired_at = now()
        where s.doc_id = p_doc_id and s.doc_version < p_keep_version and s.retired_at is null
        returning s.fragment_id
    )
    select coalesce(array_agg(distinct fragment_id), '{}') into affected from retired;

    with orphaned as (
        select f.fragment_id, f.namespace, f.owner, f.heading_path, f.symbol, f.chunker_version
        from data.fragments f
        where f.fragment_id = any(affected) and f.active
          and not exists (select 1 from data.fragment_sources s
                          where s.fragment_id = f.fragment_id and s.retired_at is null
                            and s.content_hash = f.content_hash)
    ), gone as (
        delete from data.fragment_sources s using orphaned o
        where s.fragment_id = o.fragment_id and s.retired_at is null
        returning s.doc_id, s.doc_version, s.ordinal, s.anchor, s.start_line, s.end_line, o.namespace,
                  o.owner, o.heading_path, o.symbol, o.chunker_version
    )
    select coalesce(jsonb_agg(jsonb_build_object(
               'doc_id', g.doc_id, 'doc_version', g.doc_version, 'ordinal', g.ordinal, 'anchor', g.anchor,
               'start_line', g.start_line, 'end_line', g.end_line, 'namespace', g.namespace, 'owner', g.owner,
               'heading_path', to_jsonb(g.heading_path), 'symbol', g.symbol, 'path', d.path,
               'chunker_version', g.chunker_version,
               'text', array_to_string((string_to_array(v.content, E'\n'))[g.start_line:g.end_line], E'\n'))
               order by g.doc_id, g.ordinal), '[]'::jsonb)
    into detached
    from gone g
    join data.documents d on d.doc_id = g.doc_id
    join data.document_versions v on v.doc_id = g.doc_id and v.version = g.doc_version;

    perform data._deactivate_unsourced(affected);
    return detached;
end
$$;


ALTER FUNCTION data._retire_sources(p_doc_id bigint, p_keep_version integer) OWNER TO <migrator>;

--
-- Name: _rule_rows(bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._rule_rows(p_ids bigint[]) RETURNS TABLE(rule_id bigint, org_id text, repo_id text, name text, path_globs text[], symbol_globs text[], context_ref text, created_by text, created_at timestamp with time zone, expires_at timestamp with time zone, enabled boolean, expired boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    select r.rule_id, r.org_id, r.repo_id, r.name, r.path_globs, r.symbol_globs,
           'ctx_' || r.context_id || '@' || coalesce(r.version::text, 'latest'), r.created_by, r.created_at,
           r.expires_at, r.enabled, coalesce(r.expires_at <= clock_timestamp(), false)
    from data.context_rules r
    where r.rule_id = any (p_ids)
    order by r.rule_id
$$;


ALTER FUNCTION data._rule_rows(p_ids bigint[]) OWNER TO <migrator>;

--
-- Name: _serving_models(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._serving_models() RETURNS TABLE(model_id integer, namespace text, name text, dims integer, generation integer)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    requested jsonb;
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
    return query
    select em.model_id, em.namespace, em.name, em.dims, em.generation
    from data.embedding_models em
    where case when requested ? em.namespace
               then em.generation::text = requested ->> em.namespace and em.dropped_at is null
               else em.status = 'active' end;
end
$$;


ALTER FUNCTION data._serving_models() OWNER TO <migrator>;

--
-- Name: FUNCTION _serving_models(); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._serving_models() IS 'Per namespace, the generation queries search: the active one, or the live one contexts.serve_generations names.';


--
-- Name: _stale_core(text, timestamp with time zone, interval, integer, interval); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._stale_core(p_org_id text, p_as_of timestamp with time zone, p_window interval, p_min integer, p_after interval) RETURNS TABLE(fragment_id bigint, retrievals integer, last_retrieved_at timestamp with time zone)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    with counted as (
        select r.fragment_id, count(*)::int as retrievals, max(r.returned_at) as last_retrieved_at
        from data.fragment_returns r
        where r.org_id = p_org_id and r.returned_at > p_as_of - p_window and r.returned_at <= p_as_of
        group by r.fragment_id
        having count(*) >= p_min
    )
    select c.fragment_id, c.retrievals, c.last_retrieved_at
    from counted c
    join data.fragments f on f.org_id = p_org_id and f.fragment_id = c.fragment_id
    where f.active and f.updated_at <= p_as_of - p_after
$$;


ALTER FUNCTION data._stale_core(p_org_id text, p_as_of timestamp with time zone, p_window interval, p_min integer, p_after interval) OWNER TO <migrator>;

--
-- Name: _stale_readable(text, timestamp with time zone, integer, integer, integer); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._stale_readable(p_org_id text, p_as_of timestamp with time zone, p_window_days integer, p_min integer, p_after_days integer) RETURNS TABLE(fragment_id bigint, retrievals integer, last_retrieved_at timestamp with time zone, window_days integer, min_retrievals integer, stale_after_days integer)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    with knobs as (
        select coalesce(make_interval(days => p_window_days), o.stale_window) as win,
               coalesce(p_min, o.stale_min_retrievals) as least_n,
               coalesce(make_interval(days => p_after_days), o.stale_after) as after
        from data.orgs o where o.org_id = p_org_id and o.org_id = (select data.acl_org())
    )
    select s.fragment_id, s.retrievals, s.last_retrieved_at, (extract(epoch from k.win) / 86400)::int, k.least_n,
           (extract(epoch from k.after) / 86400)::int
    from knobs k
    cross join lateral data._stale_core(p_org_id, p_as_of, k.win, k.least_n, k.after) s
    join data.fragments f on f.org_id = p_org_id and f.fragment_id = s.fragment_id
    where (f.repo_id is null or (select data.acl_org_wide()) or f.repo_id = any ((select data.acl_repos())::text[]))
      and (f.persona_id is null or (select data.acl_org_wide())
           or f.persona_id = any ((select data.acl_personas())::text[]))
      and (f.session_id is null or f.session_id = any ((select data.acl_sessions())::text[]))
$$;


ALTER FUNCTION data._stale_readable(p_org_id text, p_as_of timestamp with time zone, p_window_days integer, p_min integer, p_after_days integer) OWNER TO <migrator>;

--
-- Name: FUNCTION _stale_readable(p_org_id text, p_as_of timestamp with time zone, p_window_days integer, p_min integer, p_after_days integer); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._stale_readable(p_org_id text, p_as_of timestamp with time zone, p_window_days integer, p_min integer, p_after_days integer) IS 'Stale fragments (by the org''s thresholds unless given) that the current principal may read, with their retrievals in the window.';


--
-- Name: _standby_binding(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._standby_binding(p_binding text, OUT org_id text, OUT principal_id text) RETURNS SETOF record
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $_$
    select b.org_id, b.principal_id
    from (select convert_from(decode(split_part(p_binding, '.', 3), 'hex'), 'UTF8') as org_id,
                 convert_from(decode(split_part(p_binding, '.', 4), 'hex'), 'UTF8') as principal_id
          where p_binding ~ '^standby\.[0-9a-f]{64}\.([0-9a-f]{2})+\.([0-9a-f]{2})+$') b
    where split_part(p_binding, '.', 2) = data._standby_signature(b.org_id, b.principal_id)
$_$;


ALTER FUNCTION data._standby_binding(p_binding text, OUT org_id text, OUT principal_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION _standby_binding(p_binding text, OUT org_id text, OUT principal_id text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._standby_binding(p_binding text, OUT org_id text, OUT principal_id text) IS 'Org and principal of a signed binding made on a hot standby in this backend and transaction.';


--
-- Name: _standby_signature(text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._standby_signature(p_org_id text, p_principal_id text) RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
    select encode(sha256(sha256(k.secret || '\x6f75746572'::bytea)
                         || sha256(sha256(k.secret || '\x696e6e6572'::bytea)
                                   || convert_to(concat_ws('.', encode(convert_to(p_org_id, 'UTF8'), 'hex'),
                                                           encode(convert_to(p_principal_id, 'UTF8'), 'hex'),
                                                           pg_backend_pid(),
                                                           extract(epoch from transaction_timestamp())), 'UTF8'))),
                  'hex')
    from data.binding_keys k
    where k.key_id = 1
$$;


ALTER FUNCTION data._standby_signature(p_org_id text, p_principal_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION _standby_signature(p_org_id text, p_principal_id text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._standby_signature(p_org_id text, p_principal_id text) IS 'Signature of a principal binding made on a hot standby, for this backend and transaction.';


--
-- Name: _valid_login(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._valid_login(p_login text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
begin
    if p_login is null or p_login !~ '^[a-z_][a-z0-9_.-]{0,62}$' or p_login like 'pg\_%' then
        raise exception 'invalid login name: % (lowercase letters, digits, _ . -, at most 63, not pg_...)',
            coalesce(p_login, '(null)') using errcode = '22023';
    end if;
    return p_login;
end
$_$;


ALTER FUNCTION data._valid_login(p_login text) OWNER TO <migrator>;

--
-- Name: contexts; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.contexts (
    context_id bigint NOT NULL,
    org_id text NOT NULL,
    repo_id text,
    persona_id text,
    session_id text,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    retired_at timestamp with time zone,
    retired_by text,
    CONSTRAINT context_name_format CHECK ((name ~ '^[A-Za-z0-9][A-Za-z0-9_.:/ -]{0,127}$'::text)),
    CONSTRAINT contexts_created_at_readable CHECK (data._readable_time(created_at, 'contexts.created_at'::text)),
    CONSTRAINT contexts_description_check CHECK ((length(description) <= 2000)),
    CONSTRAINT contexts_retired_at_readable CHECK (data._readable_time(retired_at, 'contexts.retired_at'::text))
);

ALTER TABLE ONLY data.contexts FORCE ROW LEVEL SECURITY;


ALTER TABLE data.contexts OWNER TO <migrator>;

--
-- Name: TABLE contexts; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.contexts IS 'Contexts: named, versioned bundles of fragments in a scope (api.context_create, api.contexts_list); `ctx_<id>@<version>` addresses a version.';


--
-- Name: COLUMN contexts.created_by; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.contexts.created_by IS 'Principal that created it (it held a write grant on the context''s scope).';


--
-- Name: COLUMN contexts.retired_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.contexts.retired_at IS 'Set by api.context_retire: out of listings and retrieval, still readable by reference (audit).';


--
-- Name: _writable_context(bigint, boolean); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._writable_context(p_context_id bigint, p_retired_ok boolean DEFAULT false) RETURNS data.contexts
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    me record;
    ctx data.contexts;
begin
    select * into me from data._principal_or_raise();
    select c.* into ctx from data.contexts c
    where c.context_id = p_context_id and c.org_id = me.org_id
      and (c.repo_id is null or data.acl_org_wide() or c.repo_id = any (data.acl_repos()))
      and (c.persona_id is null or data.acl_org_wide() or c.persona_id = any (data.acl_personas()))
      and (c.session_id is null or c.session_id = any (data.acl_sessions()));
    if ctx.context_id is null then
        raise exception 'unknown context: ctx_%', p_context_id using errcode = 'P0002';
    end if;
    perform data._require_write(ctx.org_id, ctx.repo_id, ctx.persona_id, ctx.session_id);
    if ctx.retired_at is not null and not p_retired_ok then
        raise exception 'context ctx_% is retired', p_context_id using errcode = '55000';
    end if;
    return ctx;
end
$$;


ALTER FUNCTION data._writable_context(p_context_id bigint, p_retired_ok boolean) OWNER TO <migrator>;

--
-- Name: acl_audit(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data.acl_audit() RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$ select cardinality(data._acl('audit')) > 0 $$;


ALTER FUNCTION data.acl_audit() OWNER TO <migrator>;

--
-- Name: acl_org(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data.acl_org() RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$ select (data.current_principal()).org_id $$;


ALTER FUNCTION data.acl_org() OWNER TO <migrator>;

--
-- Name: FUNCTION acl_org(); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data.acl_org() IS 'The current principal''s org (null: none bound, nothing visible).';


--
-- Name: acl_org_wide(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data.acl_org_wide() RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$ select cardinality(data._acl('org')) > 0 $$;


ALTER FUNCTION data.acl_org_wide() OWNER TO <migrator>;

--
-- Name: FUNCTION acl_org_wide(); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data.acl_org_wide() IS 'True when the current principal holds an org grant (every repo and persona).';


--
-- Name: acl_personas(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data.acl_personas() RETURNS text[]
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$ select data._acl('persona') $$;


ALTER FUNCTION data.acl_personas() OWNER TO <migrator>;

--
-- Name: acl_principal(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data.acl_principal() RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$ select (data.current_principal()).principal_id $$;


ALTER FUNCTION data.acl_principal() OWNER TO <migrator>;

--
-- Name: acl_repos(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data.acl_repos() RETURNS text[]
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$ select data._acl('repo') $$;


ALTER FUNCTION data.acl_repos() OWNER TO <migrator>;

--
-- Name: acl_sessions(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data.acl_sessions() RETURNS text[]
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$ select data._acl('session') $$;


ALTER FUNCTION data.acl_sessions() OWNER TO <migrator>;

--
-- Name: FUNCTION acl_sessions(); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data.acl_sessions() IS 'Live (unexpired) sessions the current principal holds a grant on.';


--
-- Name: current_principal(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data.current_principal(OUT org_id text, OUT principal_id text) RETURNS record
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS $$
declare
    binding constant text := nullif(current_setting('contexts.binding', true), '');
begin
    if binding is not null then
        if pg_is_in_recovery() then
            select s.org_id, s.principal_id into org_id, principal_id
            from data._standby_binding(binding) s
            join data.principals p on p.org_id = s.org_id and p.principal_id = s.principal_id
            where p.disabled_at is null;
        else
            select b.org_id, b.principal_id into org_id, principal_id
            from data.principal_bindings b
            join data.principals p on p.org_id = b.org_id and p.principal_id = b.principal_id
            where b.nonce = binding
              and b.backend_pid = pg_backend_pid()
              and b.xact_id = pg_current_xact_id_if_assigned()
              and p.disabled_at is null;
        end if;
        if org_id is not null then
            return;
        end if;
    end if;
    select p.org_id, p.principal_id into org_id, principal_id
    from data.principals p
    where p.db_role = session_user and p.disabled_at is null
    limit 1;
end
$$;


ALTER FUNCTION data.current_principal(OUT org_id text, OUT principal_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION current_principal(OUT org_id text, OUT principal_id text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data.current_principal(OUT org_id text, OUT principal_id text) IS 'Org and principal the current transaction acts for (null: nobody).';


--
-- Name: document_retrievals; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.document_retrievals AS
SELECT
    NULL::text AS org_id,
    NULL::bigint AS doc_id,
    NULL::text AS path,
    NULL::text AS kind,
    NULL::text AS repo_id,
    NULL::text AS persona_id,
    NULL::text AS session_id,
    NULL::integer AS current_version,
    NULL::bigint AS fragments_returned,
    NULL::bigint AS fragments_retrieved,
    NULL::bigint AS candidacies,
    NULL::timestamp with time zone AS last_retrieved_at;


ALTER VIEW api.document_retrievals OWNER TO <migrator>;

--
-- Name: VIEW document_retrievals; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.document_retrievals IS 'Per document you may read: how often the retrievals you may read returned its fragments. Most retrieved: order by fragments_returned desc.';


--
-- Name: COLUMN document_retrievals.fragments_returned; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.document_retrievals.fragments_returned IS 'Fragments of this document returned, summed over retrievals.';


--
-- Name: COLUMN document_retrievals.fragments_retrieved; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.document_retrievals.fragments_retrieved IS 'Distinct fragments of this document ever returned.';


--
-- Name: document_version_counts; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.document_version_counts AS
SELECT
    NULL::bigint AS doc_id,
    NULL::text AS org_id,
    NULL::text AS repo_id,
    NULL::text AS persona_id,
    NULL::text AS session_id,
    NULL::text AS path,
    NULL::text AS kind,
    NULL::integer AS current_version,
    NULL::bigint AS versions,
    NULL::timestamp with time zone AS first_version_at,
    NULL::timestamp with time zone AS last_version_at;


ALTER VIEW api.document_version_counts OWNER TO <migrator>;

--
-- Name: VIEW document_version_counts; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.document_version_counts IS 'Documents you may read with their number of stored versions and when the first and last were written. Most versions: order by versions desc.';


--
-- Name: eval_figures; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.eval_figures (
    run_id bigint NOT NULL,
    dataset text NOT NULL,
    split text NOT NULL,
    stage text NOT NULL,
    scope text,
    metric text NOT NULL,
    value double precision,
    queries integer,
    baseline double precision,
    status text,
    waiver text,
    CONSTRAINT eval_figures_check CHECK (((value IS NOT NULL) OR COALESCE((status = 'missing'::text), false))),
    CONSTRAINT eval_figures_queries_check CHECK ((queries >= 0)),
    CONSTRAINT eval_figures_status_check CHECK ((status = ANY (ARRAY['ok'::text, 'improved'::text, 'regressed'::text, 'waived'::text, 'missing'::text])))
);


ALTER TABLE data.eval_figures OWNER TO <migrator>;

--
-- Name: TABLE eval_figures; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.eval_figures IS 'Golden-set figures of an eval run: one per set, stage, query scope and metric; gate runs add the baseline and the check''s status. Global: no tenant data (see 0008).';


--
-- Name: COLUMN eval_figures.scope; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.eval_figures.scope IS 'A query scope label of the labelled set (per-scope breakdown); null: every query of the set.';


--
-- Name: COLUMN eval_figures.value; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.eval_figures.value IS 'The figure measured; null only for a gated figure the run did not measure (status missing).';


--
-- Name: eval_runs; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.eval_runs (
    run_id bigint NOT NULL,
    command text NOT NULL,
    pipeline jsonb NOT NULL,
    pipeline_version text GENERATED ALWAYS AS ("left"(md5((pipeline)::text), 12)) STORED NOT NULL,
    options jsonb DEFAULT '{}'::jsonb NOT NULL,
    outcome text,
    contexts_version text NOT NULL,
    started_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT eval_runs_command_check CHECK ((command = ANY (ARRAY['run'::text, 'gate'::text, 'replay'::text]))),
    CONSTRAINT eval_runs_finished_at_readable CHECK (data._readable_time(finished_at, 'eval_runs.finished_at'::text)),
    CONSTRAINT eval_runs_options_check CHECK ((jsonb_typeof(options) = 'object'::text)),
    CONSTRAINT eval_runs_outcome_check CHECK ((outcome = ANY (ARRAY['passed'::text, 'failed'::text, 'baseline'::text]))),
    CONSTRAINT eval_runs_pipeline_check CHECK ((jsonb_typeof(pipeline) = 'object'::text)),
    CONSTRAINT eval_runs_started_at_readable CHECK (data._readable_time(started_at, 'eval_runs.started_at'::text))
);


ALTER TABLE data.eval_runs OWNER TO <migrator>;

--
-- Name: TABLE eval_runs; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.eval_runs IS 'One row per `contexts eval run|gate|replay`: the pipeline measured, the options, when. Global: no tenant data (see 0008).';


--
-- Name: COLUMN eval_runs.pipeline; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.eval_runs.pipeline IS 'Versions and knobs the figures depend on (chunker, models, dtype, fragment size, BM25 analysis, fusion, reranker).';


--
-- Name: COLUMN eval_runs.pipeline_version; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.eval_runs.pipeline_version IS 'Short digest of pipeline: runs with the same value measured the same pipeline.';


--
-- Name: COLUMN eval_runs.outcome; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.eval_runs.outcome IS 'gate: passed, failed, or baseline (the figures were written as the new baseline); null otherwise.';


--
-- Name: COLUMN eval_runs.started_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.eval_runs.started_at IS 'When the command started, by the clock of the machine that ran it.';


--
-- Name: COLUMN eval_runs.finished_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.eval_runs.finished_at IS 'When the run was recorded, by the database''s clock.';


--
-- Name: eval_figures; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.eval_figures AS
 SELECT f.run_id,
    r.command,
    r.finished_at AS measured_at,
    r.pipeline_version,
    f.dataset,
    f.split,
    f.stage,
    f.scope,
    f.metric,
    f.value,
    f.queries,
    f.baseline,
    (f.value - f.baseline) AS delta,
    f.status,
    f.waiver
   FROM (data.eval_figures f
     JOIN data.eval_runs r ON ((r.run_id = f.run_id)));


ALTER VIEW api.eval_figures OWNER TO <migrator>;

--
-- Name: VIEW eval_figures; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.eval_figures IS 'Golden-set figures per eval run, set, stage, query scope (null: all queries) and metric (ndcg@10, mrr@10, recall@10, recall@100); gate runs add baseline, delta and status. Chart value over measured_at.';


--
-- Name: eval_replays; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.eval_replays (
    run_id bigint NOT NULL,
    ordinal integer NOT NULL,
    org_id text NOT NULL,
    principal_id text NOT NULL,
    trace_id uuid,
    origin text NOT NULL,
    query text NOT NULL,
    request jsonb NOT NULL,
    overlap double precision,
    flagged boolean NOT NULL,
    same_order boolean,
    current jsonb DEFAULT '[]'::jsonb NOT NULL,
    candidate jsonb DEFAULT '[]'::jsonb NOT NULL,
    error text,
    CONSTRAINT eval_replays_candidate_check CHECK ((jsonb_typeof(candidate) = 'array'::text)),
    CONSTRAINT eval_replays_current_check CHECK ((jsonb_typeof(current) = 'array'::text)),
    CONSTRAINT eval_replays_ordinal_check CHECK ((ordinal >= 1)),
    CONSTRAINT eval_replays_overlap_check CHECK (((overlap >= (0)::double precision) AND (overlap <= (1)::double precision))),
    CONSTRAINT eval_replays_request_check CHECK ((jsonb_typeof(request) = 'object'::text))
);

ALTER TABLE ONLY data.eval_replays FORCE ROW LEVEL SECURITY;


ALTER TABLE data.eval_replays OWNER TO <migrator>;

--
-- Name: TABLE eval_replays; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.eval_replays IS 'One replayed query of an eval replay run: the top results under the current and the candidate pipeline, their token overlap, flagged or not. Read through api.eval_replay_diffs.';


--
-- Name: COLUMN eval_replays.principal_id; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.eval_replays.principal_id IS 'Who the query was replayed for (the principal that asked, for a recorded trace).';


--
-- Name: COLUMN eval_replays.trace_id; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.eval_replays.trace_id IS 'The recorded retrieval replayed; null for a query read from a file.';


--
-- Name: eval_replay_diffs; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.eval_replay_diffs WITH (security_barrier='true') AS
 SELECT x.run_id,
    x.finished_at AS replayed_at,
    x.pipeline_version,
    (x.options -> 'candidate'::text) AS candidate_config,
    e.ordinal,
    e.org_id,
    e.principal_id,
    e.trace_id,
    e.origin,
    r.query,
    r.request,
    e.overlap,
    e.flagged,
    e.same_order,
    data._redact_candidates(e.org_id, e.current) AS current,
    data._redact_candidates(e.org_id, e.candidate) AS candidate,
        CASE
            WHEN (r.query IS NOT NULL) THEN e.error
            ELSE NULL::text
        END AS error,
    (r.redacted ||
        CASE
            WHEN ((r.query IS NULL) AND (e.error IS NOT NULL)) THEN ARRAY['error'::text]
            ELSE '{}'::text[]
        END) AS redacted
   FROM (((api.whoami() me(org_id, principal_id, org_wide, repos, personas, sessions, audit)
     JOIN data.eval_replays e ON (((e.org_id = me.org_id) AND ((e.principal_id = me.principal_id) OR me.audit))))
     JOIN data.eval_runs x ON ((x.run_id = e.run_id)))
     CROSS JOIN LATERAL data._redact_request(e.org_id, e.query, e.request, me.org_wide, me.repos, me.personas, me.sessions) r(query, request, redacted));


ALTER VIEW api.eval_replay_diffs OWNER TO <migrator>;

--
-- Name: VIEW eval_replay_diffs; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.eval_replay_diffs IS 'Queries replayed by contexts eval replay that you may read (replayed for you; your org''s with an audit grant): top results under the current and the candidate pipeline, their token overlap and whether it was flagged, redacted as api.retrieval_traces redacts traces.';


--
-- Name: COLUMN eval_replay_diffs.current; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.eval_replay_diffs.current IS 'Top results under the current pipeline, best first: fragment_id, source, final_score, preview; a fragment you may not read keeps only its final_score ("redacted": true).';


--
-- Name: COLUMN eval_replay_diffs.candidate; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.eval_replay_diffs.candidate IS 'Top results under the candidate pipeline, as current.';


--
-- Name: COLUMN eval_replay_diffs.redacted; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.eval_replay_diffs.redacted IS 'Fields withheld from you (query, request.query, request.scope.session_id, error, ...); empty when none.';


--
-- Name: eval_runs; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.eval_runs AS
 SELECT run_id,
    command,
    started_at,
    finished_at,
    pipeline_version,
    outcome,
    ARRAY( SELECT DISTINCT f.dataset
           FROM data.eval_figures f
          WHERE (f.run_id = r.run_id)
          ORDER BY f.dataset) AS datasets,
    pipeline,
    options,
    contexts_version
   FROM data.eval_runs r;


ALTER VIEW api.eval_runs OWNER TO <migrator>;

--
-- Name: VIEW eval_runs; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.eval_runs IS 'Eval runs (contexts eval run, gate, replay): when, which pipeline (pipeline_version groups runs of the same one), which labelled sets, and the gate''s outcome.';


--
-- Name: retrieval_traces; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.retrieval_traces (
    trace_id uuid DEFAULT gen_random_uuid() NOT NULL,
    org_id text NOT NULL,
    principal_id text,
    query text NOT NULL,
    request jsonb NOT NULL,
    pipeline jsonb NOT NULL,
    candidates jsonb NOT NULL,
    duration_ms double precision,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    query_models text[],
    query_vectors extensions.vector[],
    CONSTRAINT retrieval_traces_created_at_readable CHECK (data._readable_time(created_at, 'retrieval_traces.created_at'::text)),
    CONSTRAINT retrieval_traces_query_vectors_match CHECK ((cardinality(query_models) = cardinality(query_vectors)))
);

ALTER TABLE ONLY data.retrieval_traces FORCE ROW LEVEL SECURITY;


ALTER TABLE data.retrieval_traces OWNER TO <migrator>;

--
-- Name: TABLE retrieval_traces; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.retrieval_traces IS 'One row per retrieval: every candidate''s ranks and scores, and why it was or was not included.';


--
-- Name: COLUMN retrieval_traces.query_models; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.retrieval_traces.query_models IS 'Embedding model of each query vector (data.embedding_models.name).';


--
-- Name: COLUMN retrieval_traces.query_vectors; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.retrieval_traces.query_vectors IS 'The query''s vector for each model of query_models, as the service computed it.';


--
-- Name: retrieval_traces; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.retrieval_traces WITH (security_barrier='true') AS
 SELECT t.trace_id,
    t.org_id,
    t.principal_id,
    r.query,
    r.request,
    t.pipeline,
    data._redact_candidates(t.org_id, t.candidates) AS candidates,
    t.duration_ms,
    t.created_at,
    r.redacted
   FROM ((api.whoami() me(org_id, principal_id, org_wide, repos, personas, sessions, audit)
     JOIN data.retrieval_traces t ON (((t.org_id = me.org_id) AND ((t.principal_id = me.principal_id) OR me.audit))))
     CROSS JOIN LATERAL data._redact_request(t.org_id, t.query, t.request, me.org_wide, me.repos, me.personas, me.sessions) r(query, request, redacted));


ALTER VIEW api.retrieval_traces OWNER TO <migrator>;

--
-- Name: VIEW retrieval_traces; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.retrieval_traces IS 'Retrieval traces the caller may read (its own; its org''s with an audit grant), each redacted to what its grants let it read now: see redacted, and candidates[].redacted.';


--
-- Name: COLUMN retrieval_traces.query; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrieval_traces.query IS 'The query; null when withheld (then listed in redacted).';


--
-- Name: COLUMN retrieval_traces.request; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrieval_traces.request IS 'The request body; a scope id the caller holds no grant on is null and listed in redacted, with the query.';


--
-- Name: COLUMN retrieval_traces.candidates; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrieval_traces.candidates IS 'Each candidate''s ranks, scores and fate; one whose fragment the caller may not read has "redacted": true and nothing that identifies it.';


--
-- Name: COLUMN retrieval_traces.redacted; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrieval_traces.redacted IS 'Fields withheld from this caller (query, request.query, request.scope.session_id, ...); empty when none.';


--
-- Name: fragment_retrievals; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.fragment_retrievals WITH (security_invoker='true') AS
 SELECT t.org_id,
    ((e.value ->> 'fragment_id'::text))::bigint AS fragment_id,
    (array_agg((e.value ->> 'source'::text) ORDER BY t.created_at DESC, t.trace_id))[1] AS source,
    (array_agg((data._json_number((e.value -> 'doc_id'::text)))::bigint ORDER BY t.created_at DESC, t.trace_id))[1] AS doc_id,
    count(*) FILTER (WHERE ((e.value ->> 'included'::text) = 'true'::text)) AS retrievals,
    count(*) AS candidacies,
    (min(data._json_number((e.value -> 'fused_rank'::text))))::integer AS best_fused_rank,
    max(t.created_at) FILTER (WHERE ((e.value ->> 'included'::text) = 'true'::text)) AS last_retrieved_at,
    max(t.created_at) AS last_candidate_at
   FROM (api.retrieval_traces t
     CROSS JOIN LATERAL jsonb_array_elements(t.candidates) e(value))
  WHERE (((e.value ->> 'redacted'::text) = 'false'::text) AND (jsonb_typeof((e.value -> 'fragment_id'::text)) = 'number'::text))
  GROUP BY t.org_id, ((e.value ->> 'fragment_id'::text))::bigint;


ALTER VIEW api.fragment_retrievals OWNER TO <migrator>;

--
-- Name: VIEW fragment_retrievals; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.fragment_retrievals IS 'Per fragment you may read: how many of the retrievals you may read returned it (retrievals) or ranked it as a candidate (candidacies), and when last. Most retrieved: order by retrievals desc.';


--
-- Name: COLUMN fragment_retrievals.source; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.fragment_retrievals.source IS 'path#anchor the newest retrieval cited it from.';


--
-- Name: fragments; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.fragments (
    fragment_id bigint CONSTRAINT fragments_fragment_id_not_null1 NOT NULL,
    org_id text CONSTRAINT fragments_org_id_not_null1 NOT NULL,
    repo_id text,
    persona_id text,
    session_id text,
    doc_id bigint,
    doc_version integer,
    namespace text CONSTRAINT fragments_namespace_not_null1 NOT NULL,
    kind text CONSTRAINT fragments_kind_not_null1 NOT NULL,
    owner text CONSTRAINT fragments_owner_not_null1 NOT NULL,
    heading_path text[] DEFAULT '{}'::text[] CONSTRAINT fragments_heading_path_not_null1 NOT NULL,
    symbol text,
    text text CONSTRAINT fragments_text_not_null1 NOT NULL,
    content_hash text CONSTRAINT fragments_content_hash_not_null1 NOT NULL,
    token_count integer CONSTRAINT fragments_token_count_not_null1 NOT NULL,
    chunker_version text CONSTRAINT fragments_chunker_version_not_null1 NOT NULL,
    simhash bigint CONSTRAINT fragments_simhash_not_null1 NOT NULL,
    simhash_band0 integer GENERATED ALWAYS AS ((((simhash >> 48) & (65535)::bigint))::integer) STORED,
    simhash_band1 integer GENERATED ALWAYS AS ((((simhash >> 32) & (65535)::bigint))::integer) STORED,
    simhash_band2 integer GENERATED ALWAYS AS ((((simhash >> 16) & (65535)::bigint))::integer) STORED,
    simhash_band3 integer GENERATED ALWAYS AS (((simhash & (65535)::bigint))::integer) STORED,
    tsv tsvector CONSTRAINT fragments_tsv_not_null1 NOT NULL,
    active boolean DEFAULT true CONSTRAINT fragments_active_not_null1 NOT NULL,
    created_at timestamp with time zone DEFAULT now() CONSTRAINT fragments_created_at_not_null1 NOT NULL,
    updated_at timestamp with time zone DEFAULT now() CONSTRAINT fragments_updated_at_not_null1 NOT NULL,
    negative boolean DEFAULT false NOT NULL,
    valid_from timestamp with time zone,
    valid_until timestamp with time zone,
    owner_source text DEFAULT 'document'::text NOT NULL,
    reading bytea,
    CONSTRAINT fragments_created_at_readable CHECK (data._readable_time(created_at, 'fragments.created_at'::text)),
    CONSTRAINT fragments_owner_source_known CHECK ((owner_source = ANY (ARRAY['document'::text, 'codeowners'::text, 'default'::text, 'reassigned'::text, 'none'::text]))),
    CONSTRAINT fragments_token_count_check1 CHECK ((token_count >= 0)),
    CONSTRAINT fragments_updated_at_readable CHECK (data._readable_time(updated_at, 'fragments.updated_at'::text)),
    CONSTRAINT fragments_valid_from_readable CHECK (data._readable_time(valid_from, 'fragments.valid_from'::text)),
    CONSTRAINT fragments_valid_until_readable CHECK (data._readable_time(valid_until, 'fragments.valid_until'::text))
)
PARTITION BY LIST (org_id);

ALTER TABLE ONLY data.fragments FORCE ROW LEVEL SECURITY;


ALTER TABLE data.fragments OWNER TO <migrator>;

--
-- Name: TABLE fragments; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.fragments IS 'Canonical fragments: one decision or one code unit, deduplicated by SimHash. One partition per org.';


--
-- Name: COLUMN fragments.doc_id; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragments.doc_id IS 'Document that first produced this text (null once deleted); all sources are in fragment_sources.';


--
-- Name: COLUMN fragments.heading_path; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragments.heading_path IS 'Headings (prose) or enclosing symbols (code) above the fragment.';


--
-- Name: COLUMN fragments.active; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragments.active IS 'True while at least one live document version points at the fragment.';


--
-- Name: COLUMN fragments.negative; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragments.negative IS 'An anti-pattern or known trap (R-DOC-2): returned with negative: true, "do not do this". From the document that wrote the fragment: kind anti-pattern, or "negative": true in its metadata.';


--
-- Name: COLUMN fragments.valid_from; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragments.valid_from IS 'Current from this time (null: always was); kept by data._refresh_validity.';


--
-- Name: COLUMN fragments.valid_until; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragments.valid_until IS 'Current until this time, exclusive (null: still is): metadata valid_until, or when a superseding document starts.';


--
-- Name: COLUMN fragments.owner_source; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragments.owner_source IS 'Where the owner came from (as data.documents.owner_source).';


--
-- Name: COLUMN fragments.reading; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragments.reading IS 'The text as the learned reranker reads it (app.retrieve.features.reading); null: read from the text.';


--
-- Name: fragments_by_owner; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.fragments_by_owner WITH (security_invoker='true') AS
 WITH aged AS (
         SELECT f.org_id,
            f.owner,
            f.kind,
            f.namespace,
            f.token_count,
            f.updated_at,
                CASE
                    WHEN (f.updated_at > (now() - '30 days'::interval)) THEN 0
                    WHEN (f.updated_at > (now() - '90 days'::interval)) THEN 30
                    WHEN (f.updated_at > (now() - '180 days'::interval)) THEN 90
                    WHEN (f.updated_at > (now() - '365 days'::interval)) THEN 180
                    ELSE 365
                END AS age_from_days
           FROM data.fragments f
          WHERE f.active
        )
 SELECT org_id,
    owner,
    kind,
    namespace,
        CASE age_from_days
            WHEN 0 THEN 'under 30 days'::text
            WHEN 30 THEN '30 to 90 days'::text
            WHEN 90 THEN '90 to 180 days'::text
            WHEN 180 THEN '180 to 365 days'::text
            ELSE 'over a year'::text
        END AS age,
    age_from_days,
    count(*) AS fragments,
    sum(token_count) AS tokens,
    min(updated_at) AS oldest_update,
    max(updated_at) AS newest_update
   FROM aged a
  GROUP BY org_id, owner, kind, namespace, age_from_days;


ALTER VIEW api.fragments_by_owner OWNER TO <migrator>;

--
-- Name: VIEW fragments_by_owner; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.fragments_by_owner IS 'Active fragments you may read per org, owner, kind, namespace and age bucket (since last written; age_from_days sorts the buckets: 0, 30, 90, 180, 365).';


--
-- Name: fragment_sources; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.fragment_sources (
    fragment_id bigint NOT NULL,
    doc_id bigint NOT NULL,
    doc_version integer NOT NULL,
    ordinal integer NOT NULL,
    anchor text NOT NULL,
    start_line integer NOT NULL,
    end_line integer NOT NULL,
    content_hash text NOT NULL,
    retired_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    org_id text NOT NULL,
    CONSTRAINT fragment_sources_created_at_readable CHECK (data._readable_time(created_at, 'fragment_sources.created_at'::text)),
    CONSTRAINT fragment_sources_retired_at_readable CHECK (data._readable_time(retired_at, 'fragment_sources.retired_at'::text))
);

ALTER TABLE ONLY data.fragment_sources FORCE ROW LEVEL SECURITY;


ALTER TABLE data.fragment_sources OWNER TO <migrator>;

--
-- Name: TABLE fragment_sources; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.fragment_sources IS 'Where each fragment occurs: one canonical fragment, many source pointers.';


--
-- Name: COLUMN fragment_sources.content_hash; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragment_sources.content_hash IS 'Hash of this source''s own text: equal to the fragment''s for an exact pointer, different for a near-duplicate.';


--
-- Name: COLUMN fragment_sources.retired_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragment_sources.retired_at IS 'Set when a newer document version replaces this one.';


--
-- Name: fragments_never_retrieved; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.fragments_never_retrieved WITH (security_invoker='true') AS
 SELECT f.fragment_id,
    f.org_id,
    f.repo_id,
    f.persona_id,
    f.session_id,
    f.namespace,
    f.kind,
    f.owner,
    f.token_count,
    f.created_at,
    f.updated_at,
    COALESCE(r.candidacies, (0)::bigint) AS candidacies,
    ( SELECT d.path
           FROM (data.fragment_sources s
             JOIN data.documents d ON ((d.doc_id = s.doc_id)))
          WHERE ((s.fragment_id = f.fragment_id) AND (s.retired_at IS NULL))
          ORDER BY (s.content_hash = f.content_hash) DESC, s.created_at DESC, s.doc_id, s.ordinal
         LIMIT 1) AS path
   FROM (data.fragments f
     LEFT JOIN api.fragment_retrievals r ON (((r.fragment_id = f.fragment_id) AND (r.org_id = f.org_id))))
  WHERE (f.active AND (COALESCE(r.retrievals, (0)::bigint) = 0));


ALTER VIEW api.fragments_never_retrieved OWNER TO <migrator>;

--
-- Name: VIEW fragments_never_retrieved; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.fragments_never_retrieved IS 'Active fragments you may read that no retrieval you may read returned (your own retrievals; your org''s with an audit grant). candidacies: how often one was ranked but not returned.';


--
-- Name: near_duplicate_clusters; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.near_duplicate_clusters AS
SELECT
    NULL::bigint AS fragment_id,
    NULL::text AS org_id,
    NULL::text AS repo_id,
    NULL::text AS persona_id,
    NULL::text AS session_id,
    NULL::text AS namespace,
    NULL::text AS kind,
    NULL::text AS owner,
    NULL::bigint AS sources,
    NULL::bigint AS exact_sources,
    NULL::bigint AS near_sources,
    NULL::bigint AS documents,
    NULL::text[] AS paths;


ALTER VIEW api.near_duplicate_clusters OWNER TO <migrator>;

--
-- Name: VIEW near_duplicate_clusters; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.near_duplicate_clusters IS 'Near-duplicate clusters deduplication collapsed: each canonical fragment you may read with more than one live source (exact copies and near-duplicates, Hamming distance <= 3), and the paths of their documents.';


--
-- Name: COLUMN near_duplicate_clusters.paths; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.near_duplicate_clusters.paths IS 'Paths of the documents holding the text (those you may read).';


--
-- Name: near_duplicate_pairs; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.near_duplicate_pairs WITH (security_invoker='true') AS
 WITH banded AS (
         SELECT a_1.fragment_id AS a_id,
            b_1.fragment_id AS b_id,
            a_1.org_id
           FROM (data.fragments a_1
             JOIN data.fragments b_1 ON (((b_1.org_id = a_1.org_id) AND (b_1.simhash_band0 = a_1.simhash_band0) AND (b_1.fragment_id > a_1.fragment_id))))
          WHERE (a_1.active AND b_1.active)
        UNION
         SELECT a_1.fragment_id,
            b_1.fragment_id,
            a_1.org_id
           FROM (data.fragments a_1
             JOIN data.fragments b_1 ON (((b_1.org_id = a_1.org_id) AND (b_1.simhash_band1 = a_1.simhash_band1) AND (b_1.fragment_id > a_1.fragment_id))))
          WHERE (a_1.active AND b_1.active)
        UNION
         SELECT a_1.fragment_id,
            b_1.fragment_id,
            a_1.org_id
           FROM (data.fragments a_1
             JOIN data.fragments b_1 ON (((b_1.org_id = a_1.org_id) AND (b_1.simhash_band2 = a_1.simhash_band2) AND (b_1.fragment_id > a_1.fragment_id))))
          WHERE (a_1.active AND b_1.active)
        UNION
         SELECT a_1.fragment_id,
            b_1.fragment_id,
            a_1.org_id
           FROM (data.fragments a_1
             JOIN data.fragments b_1 ON (((b_1.org_id = a_1.org_id) AND (b_1.simhash_band3 = a_1.simhash_band3) AND (b_1.fragment_id > a_1.fragment_id))))
          WHERE (a_1.active AND b_1.active)
        )
 SELECT p.org_id,
    a.fragment_id,
    b.fragment_id AS near_fragment_id,
    (bit_count(((a.simhash # b.simhash))::bit(64)))::integer AS distance,
        CASE
            WHEN (a.namespace <> b.namespace) THEN 'different namespace'::text
            WHEN (((a.repo_id IS DISTINCT FROM b.repo_id) OR (a.persona_id IS DISTINCT FROM b.persona_id)) OR (a.session_id IS DISTINCT FROM b.session_id)) THEN 'different scope'::text
            ELSE 'same scope'::text
        END AS why_not_collapsed,
    a.namespace,
    a.repo_id,
    a.persona_id,
    a.session_id,
    b.namespace AS near_namespace,
    b.repo_id AS near_repo_id,
    b.persona_id AS near_persona_id,
    b.session_id AS near_session_id
   FROM ((banded p
     JOIN data.fragments a ON (((a.fragment_id = p.a_id) AND (a.org_id = p.org_id))))
     JOIN data.fragments b ON (((b.fragment_id = p.b_id) AND (b.org_id = p.org_id))))
  WHERE (bit_count(((a.simhash # b.simhash))::bit(64)) <= 3);


ALTER VIEW api.near_duplicate_pairs OWNER TO <migrator>;

--
-- Name: VIEW near_duplicate_pairs; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.near_duplicate_pairs IS 'Pairs of active fragments you may read within SimHash Hamming distance 3 that deduplication kept apart (another scope or namespace: it never collapses across them), e.g. a repo copying org-wide text.';


--
-- Name: query_vectors; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.query_vectors WITH (security_barrier='true') AS
 SELECT t.trace_id,
    t.org_id,
    t.principal_id,
    t.created_at,
    t.query,
    v.model,
    v.embedding
   FROM (((api.whoami() me(org_id, principal_id, org_wide, repos, personas, sessions, audit)
     JOIN data.retrieval_traces t ON (((t.org_id = me.org_id) AND ((t.principal_id = me.principal_id) OR me.audit))))
     CROSS JOIN LATERAL data._redact_request(t.org_id, t.query, t.request, me.org_wide, me.repos, me.personas, me.sessions) r(query, request, redacted))
     CROSS JOIN LATERAL UNNEST(t.query_models, t.query_vectors) v(model, embedding))
  WHERE (r.query IS NOT NULL);


ALTER VIEW api.query_vectors OWNER TO <migrator>;

--
-- Name: VIEW query_vectors; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.query_vectors IS 'Query vectors of the traces whose query the caller may read (api.retrieval_traces), one row per trace and embedding model; api.retrieve uses the newest of a query text.';


--
-- Name: COLUMN query_vectors.model; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.query_vectors.model IS 'The embedding model (data.embedding_models.name) that computed the vector.';


--
-- Name: COLUMN query_vectors.embedding; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.query_vectors.embedding IS 'The query''s vector as the service searched with it.';


--
-- Name: retrieval_summaries; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.retrieval_summaries WITH (security_invoker='true') AS
 WITH summarized AS (
         SELECT t.trace_id,
            t.org_id,
            t.principal_id,
            t.created_at,
            t.query,
            ((t.request -> 'scope'::text) ->> 'repo_id'::text) AS repo_id,
            ((t.request -> 'scope'::text) ->> 'persona_id'::text) AS persona_id,
            ((t.request -> 'scope'::text) ->> 'session_id'::text) AS session_id,
            (cardinality(t.redacted) > 0) AS withheld,
            COALESCE(data._json_number((t.request -> 'min_score'::text)), (0.0)::double precision) AS min_score,
            COALESCE(data._json_number((t.request -> 'min_relevance'::text)), (0.0)::double precision) AS min_relevance,
            c.candidates,
            c.included,
            c.best_score,
            c.best_relevance,
            t.duration_ms
           FROM (api.retrieval_traces t
             CROSS JOIN LATERAL ( SELECT (count(*))::integer AS candidates,
                    (count(*) FILTER (WHERE ((e.value ->> 'included'::text) = 'true'::text)))::integer AS included,
                    max(data._json_number((e.value -> 'final_score'::text))) AS best_score,
                    max(data._json_number((e.value -> 'relevance'::text))) AS best_relevance
                   FROM jsonb_array_elements(t.candidates) e(value)) c)
        )
 SELECT trace_id,
    org_id,
    principal_id,
    created_at,
    query,
    repo_id,
    persona_id,
    session_id,
    withheld,
    min_score,
    min_relevance,
        CASE
            WHEN (min_relevance > (0)::double precision) THEN min_relevance
            ELSE (0.3)::double precision
        END AS relevance_floor,
    candidates,
    included,
    best_score,
    best_relevance,
        CASE
            WHEN (candidates = 0) THEN true
            WHEN (best_relevance IS NULL) THEN NULL::boolean
            ELSE (best_relevance <
            CASE
                WHEN (min_relevance > (0)::double precision) THEN min_relevance
                ELSE (0.3)::double precision
            END)
        END AS nothing_above_floor,
    duration_ms
   FROM summarized s;


ALTER VIEW api.retrieval_summaries OWNER TO <migrator>;

--
-- Name: VIEW retrieval_summaries; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.retrieval_summaries IS 'One row per retrieval trace you may read (api.retrieval_traces): who asked, when, the scope, candidates found and included, best final score and best relevance, and whether any candidate reached the relevance floor.';


--
-- Name: COLUMN retrieval_summaries.withheld; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrieval_summaries.withheld IS 'True when the request named a scope you hold no grant on now: its query and those scope ids are null (api.retrieval_traces.redacted).';


--
-- Name: COLUMN retrieval_summaries.relevance_floor; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrieval_summaries.relevance_floor IS 'The request''s min_relevance when it set one, else 0.3 (docs/adr/0009-absolute-relevance.md).';


--
-- Name: COLUMN retrieval_summaries.best_relevance; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrieval_summaries.best_relevance IS 'Best absolute relevance among the ranked candidates (null: none ranked, or a trace from before relevance was recorded).';


--
-- Name: COLUMN retrieval_summaries.nothing_above_floor; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrieval_summaries.nothing_above_floor IS 'No ranked candidate reached relevance_floor (true when nothing was found at all; null for a trace that recorded no relevance).';


--
-- Name: retrievals_below_floor; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.retrievals_below_floor WITH (security_invoker='true') AS
 SELECT trace_id,
    org_id,
    principal_id,
    created_at,
    query,
    repo_id,
    persona_id,
    session_id,
    withheld,
    relevance_floor,
    best_relevance,
    best_score,
    candidates
   FROM api.retrieval_summaries s
  WHERE nothing_above_floor;


ALTER VIEW api.retrievals_below_floor OWNER TO <migrator>;

--
-- Name: VIEW retrievals_below_floor; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.retrievals_below_floor IS 'Retrievals you may read in which no candidate reached the relevance floor (the request''s min_relevance, else 0.3), or that found nothing. For another floor: api.retrieval_summaries where best_relevance < x.';


--
-- Name: retrievals_per_day; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.retrievals_per_day WITH (security_invoker='true') AS
 SELECT ((created_at AT TIME ZONE 'UTC'::text))::date AS day,
    org_id,
    principal_id,
    repo_id,
    persona_id,
    session_id,
    withheld,
    count(*) AS retrievals,
    count(*) FILTER (WHERE (included = 0)) AS empty,
    count(*) FILTER (WHERE nothing_above_floor) AS nothing_above_floor,
    avg(duration_ms) AS mean_ms,
    percentile_cont((0.95)::double precision) WITHIN GROUP (ORDER BY duration_ms) AS p95_ms
   FROM api.retrieval_summaries s
  GROUP BY (((created_at AT TIME ZONE 'UTC'::text))::date), org_id, principal_id, repo_id, persona_id, session_id, withheld;


ALTER VIEW api.retrievals_per_day OWNER TO <migrator>;

--
-- Name: VIEW retrievals_per_day; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.retrievals_per_day IS 'Retrievals you may read per UTC day, org, principal and requested scope (repo, persona, session; withheld: a scope you hold no grant on), with empty answers and latency.';


--
-- Name: COLUMN retrievals_per_day.empty; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrievals_per_day.empty IS 'Retrievals that returned no fragment.';


--
-- Name: api_keys; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.api_keys (
    key_id text NOT NULL,
    org_id text NOT NULL,
    principal_id text NOT NULL,
    key_hash bytea NOT NULL,
    label text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_used_at timestamp with time zone,
    revoked_at timestamp with time zone,
    CONSTRAINT api_keys_created_at_readable CHECK (data._readable_time(created_at, 'api_keys.created_at'::text)),
    CONSTRAINT api_keys_key_hash_check CHECK ((length(key_hash) = 32)),
    CONSTRAINT api_keys_key_id_check CHECK ((key_id ~ '^[a-f0-9]{12}$'::text)),
    CONSTRAINT api_keys_last_used_at_readable CHECK (data._readable_time(last_used_at, 'api_keys.last_used_at'::text)),
    CONSTRAINT api_keys_revoked_at_readable CHECK (data._readable_time(revoked_at, 'api_keys.revoked_at'::text))
);

ALTER TABLE ONLY data.api_keys FORCE ROW LEVEL SECURITY;


ALTER TABLE data.api_keys OWNER TO <migrator>;

--
-- Name: TABLE api_keys; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.api_keys IS 'Bearer keys: only the SHA-256 of the token is stored; a key acts as its principal until revoked.';


--
-- Name: authority_refreshes; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.authority_refreshes (
    refreshed_at timestamp with time zone NOT NULL,
    duration_ms double precision NOT NULL,
    scored integer NOT NULL,
    CONSTRAINT authority_refreshes_refreshed_at_readable CHECK (data._readable_time(refreshed_at, 'authority_refreshes.refreshed_at'::text))
);


ALTER TABLE data.authority_refreshes OWNER TO <migrator>;

--
-- Name: TABLE authority_refreshes; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.authority_refreshes IS 'Each refresh of data.fragment_authority: when, how long, how many fragments scored (no tenant data).';


--
-- Name: binding_keys; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.binding_keys (
    key_id smallint DEFAULT 1 NOT NULL,
    secret bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT binding_keys_created_at_readable CHECK (data._readable_time(created_at, 'binding_keys.created_at'::text)),
    CONSTRAINT binding_keys_key_id_check CHECK ((key_id = 1)),
    CONSTRAINT binding_keys_secret_check CHECK ((octet_length(secret) = 32))
);

ALTER TABLE ONLY data.binding_keys FORCE ROW LEVEL SECURITY;


ALTER TABLE data.binding_keys OWNER TO <migrator>;

--
-- Name: TABLE binding_keys; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.binding_keys IS 'The key that signs principal bindings made on a hot standby (one row; no caller role may read it).';


--
-- Name: bm25_corpus; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.bm25_corpus (
    org_id text NOT NULL,
    repo_id text,
    persona_id text,
    session_id text,
    fragment_count bigint DEFAULT 0 NOT NULL,
    total_length bigint DEFAULT 0 NOT NULL
);

ALTER TABLE ONLY data.bm25_corpus FORCE ROW LEVEL SECURITY;


ALTER TABLE data.bm25_corpus OWNER TO <migrator>;

--
-- Name: TABLE bm25_corpus; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.bm25_corpus IS 'Fragment count and total length of one scope group (for idf and average length).';


--
-- Name: bm25_postings; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.bm25_postings (
    org_id text NOT NULL,
    term text NOT NULL,
    fragment_id bigint NOT NULL,
    tf integer NOT NULL,
    dl integer NOT NULL,
    repo_id text,
    persona_id text,
    session_id text
)
PARTITION BY LIST (org_id);

ALTER TABLE ONLY data.bm25_postings FORCE ROW LEVEL SECURITY;


ALTER TABLE data.bm25_postings OWNER TO <migrator>;

--
-- Name: TABLE bm25_postings; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.bm25_postings IS 'Term frequencies of active fragments; the covering key serves BM25 and the scope filter without heap reads.';


--
-- Name: bm25_terms; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.bm25_terms (
    org_id text NOT NULL,
    term text NOT NULL,
    repo_id text,
    persona_id text,
    session_id text,
    df integer NOT NULL,
    CONSTRAINT bm25_terms_df_check CHECK ((df >= 0))
);

ALTER TABLE ONLY data.bm25_terms FORCE ROW LEVEL SECURITY;


ALTER TABLE data.bm25_terms OWNER TO <migrator>;

--
-- Name: TABLE bm25_terms; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.bm25_terms IS 'Document frequency of each term among the active fragments of one scope group.';


--
-- Name: context_members; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.context_members (
    context_id bigint NOT NULL,
    version integer NOT NULL,
    org_id text NOT NULL,
    ordinal integer NOT NULL,
    fragment_id bigint NOT NULL,
    doc_id bigint,
    doc_version integer,
    CONSTRAINT context_members_ordinal_check CHECK ((ordinal >= 1))
);

ALTER TABLE ONLY data.context_members FORCE ROW LEVEL SECURITY;


ALTER TABLE data.context_members OWNER TO <migrator>;

--
-- Name: TABLE context_members; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.context_members IS 'The fragment references of a Context version, in bundle order: a fragment id and the document version it was cited from when the version was built.';


--
-- Name: COLUMN context_members.fragment_id; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.context_members.fragment_id IS 'No foreign key: a version never changes; a fragment deleted since (its documents deleted) is simply missing when the version is read.';


--
-- Name: context_rules; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.context_rules (
    rule_id bigint NOT NULL,
    org_id text NOT NULL,
    repo_id text,
    name text NOT NULL,
    path_globs text[] DEFAULT '{}'::text[] NOT NULL,
    symbol_globs text[] DEFAULT '{}'::text[] NOT NULL,
    context_id bigint NOT NULL,
    context_org_id text NOT NULL,
    version integer,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    expires_at timestamp with time zone,
    enabled boolean DEFAULT true NOT NULL,
    CONSTRAINT context_rule_name_format CHECK ((name ~ '^[A-Za-z0-9][A-Za-z0-9_.:/ -]{0,127}$'::text)),
    CONSTRAINT context_rules_check CHECK ((((cardinality(path_globs) + cardinality(symbol_globs)) >= 1) AND ((cardinality(path_globs) + cardinality(symbol_globs)) <= 32))),
    CONSTRAINT context_rules_created_at_readable CHECK (data._readable_time(created_at, 'context_rules.created_at'::text)),
    CONSTRAINT context_rules_expires_at_readable CHECK (data._readable_time(expires_at, 'context_rules.expires_at'::text)),
    CONSTRAINT context_rules_version_check CHECK ((version >= 1))
);

ALTER TABLE ONLY data.context_rules FORCE ROW LEVEL SECURITY;


ALTER TABLE data.context_rules OWNER TO <migrator>;

--
-- Name: TABLE context_rules; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.context_rules IS 'Workflow rules (api.rule_create): a step touching a path or symbol matching a glob brings in a Context version (docs/adr/0022).';


--
-- Name: COLUMN context_rules.symbol_globs; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.context_rules.symbol_globs IS 'Globs over the symbol part of a touched entry (`path#Symbol`): `*` any run of characters but a slash.';


--
-- Name: COLUMN context_rules.context_org_id; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.context_rules.context_org_id IS 'The Context''s org: the rule''s own, or that of a publisher whose Context the rule''s org (or repo) subscribes to.';


--
-- Name: COLUMN context_rules.version; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.context_rules.version IS 'The Context version brought (null: the newest version the reader may read).';


--
-- Name: context_rules_rule_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.context_rules ALTER COLUMN rule_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.context_rules_rule_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: context_subscriptions; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.context_subscriptions (
    subscription_id bigint NOT NULL,
    context_id bigint NOT NULL,
    org_id text NOT NULL,
    version integer,
    subscriber_org_id text NOT NULL,
    subscriber_repo_id text,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    revoked_at timestamp with time zone,
    revoked_by text,
    CONSTRAINT context_subscriptions_check CHECK (((revoked_at IS NULL) OR (revoked_at >= created_at))),
    CONSTRAINT context_subscriptions_created_at_readable CHECK (data._readable_time(created_at, 'context_subscriptions.created_at'::text)),
    CONSTRAINT context_subscriptions_revoked_at_readable CHECK (data._readable_time(revoked_at, 'context_subscriptions.revoked_at'::text)),
    CONSTRAINT subscriber_repo_format CHECK ((subscriber_repo_id ~ '^[A-Za-z0-9][A-Za-z0-9_./-]{0,127}$'::text))
);

ALTER TABLE ONLY data.context_subscriptions FORCE ROW LEVEL SECURITY;


ALTER TABLE data.context_subscriptions OWNER TO <migrator>;

--
-- Name: TABLE context_subscriptions; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.context_subscriptions IS 'Grants on a Context (api.context_subscribe): the subscriber org''s principals (of subscriber_repo_id, or all of them) read the members of `version`, or of the newest version when it is null, until revoked_at. Not a copy.';


--
-- Name: COLUMN context_subscriptions.version; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.context_subscriptions.version IS 'The version subscribed to (null: follows the newest).';


--
-- Name: COLUMN context_subscriptions.subscriber_repo_id; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.context_subscriptions.subscriber_repo_id IS 'Only principals that may read this repo of the subscriber org (null: every principal of that org). Not checked against the subscriber''s repos: the publisher learns nothing of another org.';


--
-- Name: COLUMN context_subscriptions.revoked_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.context_subscriptions.revoked_at IS 'Set by api.context_unsubscribe (publisher or subscriber); the row stays for audit.';


--
-- Name: context_subscriptions_subscription_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.context_subscriptions ALTER COLUMN subscription_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.context_subscriptions_subscription_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: context_versions; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.context_versions (
    context_id bigint NOT NULL,
    org_id text NOT NULL,
    version integer NOT NULL,
    built_from jsonb DEFAULT '{}'::jsonb NOT NULL,
    note text DEFAULT ''::text NOT NULL,
    fragment_count integer NOT NULL,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT context_versions_created_at_readable CHECK (data._readable_time(created_at, 'context_versions.created_at'::text)),
    CONSTRAINT context_versions_fragment_count_check CHECK ((fragment_count >= 1)),
    CONSTRAINT context_versions_note_check CHECK ((length(note) <= 2000)),
    CONSTRAINT context_versions_version_check CHECK ((version >= 1))
);

ALTER TABLE ONLY data.context_versions FORCE ROW LEVEL SECURITY;


ALTER TABLE data.context_versions OWNER TO <migrator>;

--
-- Name: TABLE context_versions; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.context_versions IS 'Immutable versions of a Context: what each was built from (fragment ids, documents, path globs, a frozen query) and by whom.';


--
-- Name: contexts_context_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.contexts ALTER COLUMN context_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.contexts_context_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: document_versions; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.document_versions (
    doc_id bigint NOT NULL,
    version integer NOT NULL,
    content_hash text NOT NULL,
    content text NOT NULL,
    language text,
    author text,
    source_ts timestamp with time zone,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT document_versions_created_at_readable CHECK (data._readable_time(created_at, 'document_versions.created_at'::text)),
    CONSTRAINT document_versions_source_ts_readable CHECK (data._readable_time(source_ts, 'document_versions.source_ts'::text)),
    CONSTRAINT document_versions_version_check CHECK ((version >= 1))
);

ALTER TABLE ONLY data.document_versions FORCE ROW LEVEL SECURITY;


ALTER TABLE data.document_versions OWNER TO <migrator>;

--
-- Name: TABLE document_versions; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.document_versions IS 'Every distinct content a document has had; a new content hash makes a new version.';


--
-- Name: documents_doc_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.documents ALTER COLUMN doc_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.documents_doc_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: embedding_models; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.embedding_models (
    model_id integer NOT NULL,
    namespace text NOT NULL,
    name text NOT NULL,
    dims integer NOT NULL,
    generation integer NOT NULL,
    status text DEFAULT 'active'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    source text,
    window_ends_at timestamp with time zone,
    promoted_at timestamp with time zone,
    retired_at timestamp with time zone,
    dropped_at timestamp with time zone,
    CONSTRAINT embedding_models_created_at_readable CHECK (data._readable_time(created_at, 'embedding_models.created_at'::text)),
    CONSTRAINT embedding_models_dims_check CHECK (((dims >= 1) AND (dims <= 16000))),
    CONSTRAINT embedding_models_dropped_at_readable CHECK (data._readable_time(dropped_at, 'embedding_models.dropped_at'::text)),
    CONSTRAINT embedding_models_dropped_retired CHECK (((dropped_at IS NULL) OR (status = 'retired'::text))),
    CONSTRAINT embedding_models_generation_check CHECK ((generation >= 1)),
    CONSTRAINT embedding_models_promoted_at_readable CHECK (data._readable_time(promoted_at, 'embedding_models.promoted_at'::text)),
    CONSTRAINT embedding_models_retired_at_readable CHECK (data._readable_time(retired_at, 'embedding_models.retired_at'::text)),
    CONSTRAINT embedding_models_status_check CHECK ((status = ANY (ARRAY['active'::text, 'shadow'::text, 'retired'::text]))),
    CONSTRAINT embedding_models_window_ends_at_readable CHECK (data._readable_time(window_ends_at, 'embedding_models.window_ends_at'::text))
);


ALTER TABLE data.embedding_models OWNER TO <migrator>;

--
-- Name: TABLE embedding_models; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.embedding_models IS 'One row per (namespace, model generation); each has its own HNSW index.';


--
-- Name: COLUMN embedding_models.status; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.embedding_models.status IS 'active: serves queries; shadow: being built or in its window; retired: replaced (kept until window_ends_at unless dropped).';


--
-- Name: COLUMN embedding_models.source; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.embedding_models.source IS 'What loads the model (a name or a local path) when it differs from name; null: name.';


--
-- Name: COLUMN embedding_models.window_ends_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.embedding_models.window_ends_at IS 'End of the shadow window (`contexts models upgrade --window-days`); a retired generation is kept until then.';


--
-- Name: COLUMN embedding_models.promoted_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.embedding_models.promoted_at IS 'When the generation last became active by promotion (null: registered active).';


--
-- Name: COLUMN embedding_models.retired_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.embedding_models.retired_at IS 'When another generation replaced it.';


--
-- Name: COLUMN embedding_models.dropped_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.embedding_models.dropped_at IS 'When its vectors and HNSW index were dropped (the row stays: traces name it).';


--
-- Name: embedding_models_model_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.embedding_models ALTER COLUMN model_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.embedding_models_model_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: embedding_namespaces; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.embedding_namespaces (
    namespace text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    CONSTRAINT embedding_namespaces_namespace_check CHECK ((namespace ~ '^[a-z][a-z0-9_]{0,31}$'::text))
);


ALTER TABLE data.embedding_namespaces OWNER TO <migrator>;

--
-- Name: TABLE embedding_namespaces; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.embedding_namespaces IS 'Prose and code are embedded by separate models in separate vector spaces.';


--
-- Name: embeddings; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.embeddings (
    fragment_id bigint CONSTRAINT embeddings_fragment_id_not_null1 NOT NULL,
    model_id integer CONSTRAINT embeddings_model_id_not_null1 NOT NULL,
    org_id text CONSTRAINT embeddings_org_id_not_null1 NOT NULL,
    repo_id text,
    persona_id text,
    session_id text,
    embedding extensions.vector CONSTRAINT embeddings_embedding_not_null1 NOT NULL,
    created_at timestamp with time zone DEFAULT now() CONSTRAINT embeddings_created_at_not_null1 NOT NULL,
    CONSTRAINT embeddings_created_at_readable CHECK (data._readable_time(created_at, 'embeddings.created_at'::text))
)
PARTITION BY LIST (org_id);

ALTER TABLE ONLY data.embeddings FORCE ROW LEVEL SECURITY;


ALTER TABLE data.embeddings OWNER TO <migrator>;

--
-- Name: TABLE embeddings; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.embeddings IS 'Dense vectors, one per fragment and model; HNSW indexes per model and per org partition.';


--
-- Name: eval_runs_run_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.eval_runs ALTER COLUMN run_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.eval_runs_run_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: fragment_authority; Type: MATERIALIZED VIEW; Schema: data; Owner: <migrator>
--

CREATE MATERIALIZED VIEW data.fragment_authority AS
 SELECT org_id,
    fragment_id,
    pagerank,
    authority
   FROM data._citation_pagerank() r(org_id, fragment_id, pagerank, authority)
  WITH NO DATA;


ALTER MATERIALIZED VIEW data.fragment_authority OWNER TO <migrator>;

--
-- Name: MATERIALIZED VIEW fragment_authority; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON MATERIALIZED VIEW data.fragment_authority IS 'Citation PageRank per fragment (damping 0.85), per scope class, normalised to [0, 1]; no caller role may select it (no row-level security on a materialized view): read through api.retrieve_candidates.';


--
-- Name: fragment_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

CREATE SEQUENCE data.fragment_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER SEQUENCE data.fragment_id_seq OWNER TO <migrator>;

--
-- Name: fragment_id_seq; Type: SEQUENCE OWNED BY; Schema: data; Owner: <migrator>
--

ALTER SEQUENCE data.fragment_id_seq OWNED BY data.fragments.fragment_id;


--
-- Name: fragment_links; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.fragment_links (
    link_id bigint NOT NULL,
    org_id text NOT NULL,
    fragment_id bigint NOT NULL,
    repo_id text,
    persona_id text,
    session_id text,
    doc_id bigint NOT NULL,
    link_type text NOT NULL,
    target text NOT NULL,
    target_key text NOT NULL,
    target_name text,
    target_anchor text,
    target_repo text,
    target_doc_id bigint,
    target_fragment_id bigint,
    target_repo_id text,
    target_persona_id text,
    target_session_id text,
    resolved_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT fragment_links_created_at_readable CHECK (data._readable_time(created_at, 'fragment_links.created_at'::text)),
    CONSTRAINT fragment_links_link_type_check CHECK ((link_type = ANY (ARRAY['link'::text, 'url'::text, 'import'::text, 'symbol'::text, 'adr'::text, 'metadata'::text, 'supersedes'::text, 'superseded_by'::text]))),
    CONSTRAINT fragment_links_resolved_at_readable CHECK (data._readable_time(resolved_at, 'fragment_links.resolved_at'::text)),
    CONSTRAINT fragment_links_target_check CHECK (((length(target) >= 1) AND (length(target) <= 2048))),
    CONSTRAINT fragment_links_target_key_check CHECK (((length(target_key) >= 1) AND (length(target_key) <= 2048)))
);

ALTER TABLE ONLY data.fragment_links FORCE ROW LEVEL SECURITY;


ALTER TABLE data.fragment_links OWNER TO <migrator>;

--
-- Name: TABLE fragment_links; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.fragment_links IS 'References a fragment makes (links, URLs, imports, symbol uses, ADR mentions, metadata links), resolved to the fragment they cite when known; the edges of citation PageRank.';


--
-- Name: COLUMN fragment_links.target; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragment_links.target IS 'The reference as written (a link, URL, module, name, ADR mention).';


--
-- Name: COLUMN fragment_links.target_key; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragment_links.target_key IS 'What it names, as a key of data.documents.link_keys (path:P, module:M, package:P, adr:N).';


--
-- Name: COLUMN fragment_links.target_name; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragment_links.target_name IS 'A code name the target document must define (the cited fragment is its definition).';


--
-- Name: COLUMN fragment_links.target_fragment_id; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragment_links.target_fragment_id IS 'The cited fragment (null: unresolved, kept until its target arrives).';


--
-- Name: fragment_links_link_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragment_links ALTER COLUMN link_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.fragment_links_link_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: fragment_returns; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.fragment_returns (
    org_id text NOT NULL,
    trace_id uuid NOT NULL,
    fragment_id bigint NOT NULL,
    returned_at timestamp with time zone NOT NULL,
    CONSTRAINT fragment_returns_returned_at_readable CHECK (data._readable_time(returned_at, 'fragment_returns.returned_at'::text))
);

ALTER TABLE ONLY data.fragment_returns FORCE ROW LEVEL SECURITY;


ALTER TABLE data.fragment_returns OWNER TO <migrator>;

--
-- Name: TABLE fragment_returns; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.fragment_returns IS 'One row per fragment a retrieval returned (included in its answer), kept from data.retrieval_traces by a trigger: what staleness counts.';


--
-- Name: git_syncs; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.git_syncs (
    org_id text NOT NULL,
    repo_id text NOT NULL,
    commit_sha text NOT NULL,
    ref text,
    synced_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    synced_by text NOT NULL,
    written integer DEFAULT 0 NOT NULL,
    deleted integer DEFAULT 0 NOT NULL,
    full_scan boolean DEFAULT false NOT NULL,
    CONSTRAINT git_syncs_commit_sha_check CHECK ((commit_sha ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'::text)),
    CONSTRAINT git_syncs_deleted_check CHECK ((deleted >= 0)),
    CONSTRAINT git_syncs_ref_check CHECK ((length(ref) <= 1024)),
    CONSTRAINT git_syncs_synced_at_readable CHECK (data._readable_time(synced_at, 'git_syncs.synced_at'::text)),
    CONSTRAINT git_syncs_written_check CHECK ((written >= 0))
);

ALTER TABLE ONLY data.git_syncs FORCE ROW LEVEL SECURITY;


ALTER TABLE data.git_syncs OWNER TO <migrator>;

--
-- Name: TABLE git_syncs; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.git_syncs IS 'Last synced commit of each repo (contexts sync): its tracked files at that commit are what the repo''s synced documents hold (api.sync_record, api.sync_state).';


--
-- Name: COLUMN git_syncs.commit_sha; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.git_syncs.commit_sha IS 'Full object name of the commit last synced (SHA-1 or SHA-256).';


--
-- Name: COLUMN git_syncs.ref; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.git_syncs.ref IS 'Branch (or other symbolic ref) HEAD pointed at when synced; null on a detached HEAD.';


--
-- Name: COLUMN git_syncs.synced_by; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.git_syncs.synced_by IS 'Principal that synced it (it held a write grant on the repo).';


--
-- Name: COLUMN git_syncs.written; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.git_syncs.written IS 'Files that sync ingested (added, modified, renamed; unchanged content writes no version).';


--
-- Name: COLUMN git_syncs.deleted; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.git_syncs.deleted IS 'Documents that sync deleted (files deleted or renamed away).';


--
-- Name: COLUMN git_syncs.full_scan; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.git_syncs.full_scan IS 'True when that sync compared every tracked file with what is stored (first sync, or the previous commit was gone from the repository).';


--
-- Name: grants; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.grants (
    org_id text NOT NULL,
    principal_id text NOT NULL,
    scope_kind text NOT NULL,
    scope_id text NOT NULL,
    can_write boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT audit_is_read_only CHECK (((scope_kind <> 'audit'::text) OR (NOT can_write))),
    CONSTRAINT grants_created_at_readable CHECK (data._readable_time(created_at, 'grants.created_at'::text)),
    CONSTRAINT grants_scope_kind_check CHECK ((scope_kind = ANY (ARRAY['org'::text, 'repo'::text, 'persona'::text, 'session'::text, 'audit'::text]))),
    CONSTRAINT org_grants_name_the_org CHECK (((scope_kind <> ALL (ARRAY['org'::text, 'audit'::text])) OR (scope_id = org_id)))
);

ALTER TABLE ONLY data.grants FORCE ROW LEVEL SECURITY;


ALTER TABLE data.grants OWNER TO <migrator>;

--
-- Name: TABLE grants; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.grants IS 'A principal''s ACL. org: every repo and persona of the org; repo/persona/session: that one; audit: the org''s traces.';


--
-- Name: idempotent_writes; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.idempotent_writes (
    org_id text NOT NULL,
    principal_id text NOT NULL,
    idempotency_key text NOT NULL,
    request_hash text NOT NULL,
    status integer NOT NULL,
    response jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT idempotency_key_format CHECK ((idempotency_key ~ '^[!-~]{1,255}$'::text)),
    CONSTRAINT idempotent_writes_created_at_readable CHECK (data._readable_time(created_at, 'idempotent_writes.created_at'::text)),
    CONSTRAINT idempotent_writes_status_check CHECK (((status >= 200) AND (status <= 299))),
    CONSTRAINT request_hash_format CHECK ((request_hash ~ '^[0-9a-f]{64}$'::text))
);

ALTER TABLE ONLY data.idempotent_writes FORCE ROW LEVEL SECURITY;


ALTER TABLE data.idempotent_writes OWNER TO <migrator>;

--
-- Name: TABLE idempotent_writes; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.idempotent_writes IS 'The response of each write made with an Idempotency-Key (per org, principal and key, kept 24 hours): a retry is answered it and writes nothing.';


--
-- Name: model_replays; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.model_replays (
    replay_id bigint NOT NULL,
    model_id integer NOT NULL,
    org_id text NOT NULL,
    principal_id text,
    trace_id uuid NOT NULL,
    overlap double precision,
    shared_top integer,
    top integer NOT NULL,
    same_order boolean,
    error text,
    replayed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT model_replays_overlap_check CHECK (((overlap >= (0)::double precision) AND (overlap <= (1)::double precision))),
    CONSTRAINT model_replays_replayed_at_readable CHECK (data._readable_time(replayed_at, 'model_replays.replayed_at'::text)),
    CONSTRAINT model_replays_shared_top_check CHECK ((shared_top >= 0)),
    CONSTRAINT model_replays_top_check CHECK ((top >= 1))
);

ALTER TABLE ONLY data.model_replays FORCE ROW LEVEL SECURITY;


ALTER TABLE data.model_replays OWNER TO <migrator>;

--
-- Name: TABLE model_replays; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.model_replays IS 'A recorded retrieval replayed on a shadow generation: top-n token overlap and shared fragments against the active generation. Org-wide readers of the org only.';


--
-- Name: COLUMN model_replays.trace_id; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.model_replays.trace_id IS 'The retrieval replayed (data.retrieval_traces; its query is read there, redacted per reader).';


--
-- Name: COLUMN model_replays.overlap; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.model_replays.overlap IS 'Jaccard index of the word tokens of the two top-n texts (as `contexts eval replay`); null on error.';


--
-- Name: COLUMN model_replays.shared_top; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.model_replays.shared_top IS 'Fragments present in both top-n lists.';


--
-- Name: model_replays_replay_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.model_replays ALTER COLUMN replay_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.model_replays_replay_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: nudge_deliveries; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.nudge_deliveries (
    delivery_id bigint NOT NULL,
    nudge_id bigint NOT NULL,
    org_id text NOT NULL,
    url text NOT NULL,
    attempted_at timestamp with time zone DEFAULT now() NOT NULL,
    status integer,
    error text,
    duration_ms double precision,
    CONSTRAINT nudge_deliveries_attempted_at_readable CHECK (data._readable_time(attempted_at, 'nudge_deliveries.attempted_at'::text))
);

ALTER TABLE ONLY data.nudge_deliveries FORCE ROW LEVEL SECURITY;


ALTER TABLE data.nudge_deliveries OWNER TO <migrator>;

--
-- Name: TABLE nudge_deliveries; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.nudge_deliveries IS 'Every attempt to deliver a nudge: when, where, the HTTP status or the error.';


--
-- Name: nudge_deliveries_delivery_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.nudge_deliveries ALTER COLUMN delivery_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.nudge_deliveries_delivery_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: nudge_outbox; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.nudge_outbox (
    nudge_id bigint NOT NULL,
    org_id text NOT NULL,
    fragment_id bigint NOT NULL,
    owner text NOT NULL,
    period_start timestamp with time zone NOT NULL,
    payload jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    delivered_at timestamp with time zone,
    last_status integer,
    last_error text,
    CONSTRAINT nudge_outbox_created_at_readable CHECK (data._readable_time(created_at, 'nudge_outbox.created_at'::text)),
    CONSTRAINT nudge_outbox_delivered_at_readable CHECK (data._readable_time(delivered_at, 'nudge_outbox.delivered_at'::text)),
    CONSTRAINT nudge_outbox_next_attempt_at_readable CHECK (data._readable_time(next_attempt_at, 'nudge_outbox.next_attempt_at'::text)),
    CONSTRAINT nudge_outbox_period_start_readable CHECK (data._readable_time(period_start, 'nudge_outbox.period_start'::text))
);

ALTER TABLE ONLY data.nudge_outbox FORCE ROW LEVEL SECURITY;


ALTER TABLE data.nudge_outbox OWNER TO <migrator>;

--
-- Name: TABLE nudge_outbox; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.nudge_outbox IS 'Nudges owed to an org''s webhook: one row per stale fragment and period (idempotent), marked delivered only after a 2xx answer.';


--
-- Name: nudge_outbox_nudge_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.nudge_outbox ALTER COLUMN nudge_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.nudge_outbox_nudge_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: org_webhooks; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.org_webhooks (
    org_id text NOT NULL,
    url text NOT NULL,
    secret text,
    enabled boolean DEFAULT true NOT NULL,
    updated_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT org_webhooks_created_at_readable CHECK (data._readable_time(created_at, 'org_webhooks.created_at'::text)),
    CONSTRAINT org_webhooks_secret_check CHECK (((secret IS NULL) OR ((length(secret) >= 16) AND (length(secret) <= 256)))),
    CONSTRAINT org_webhooks_updated_at_readable CHECK (data._readable_time(updated_at, 'org_webhooks.updated_at'::text)),
    CONSTRAINT webhook_url_http CHECK (((url ~ '^https?://[^/?#@[:space:][:cntrl:]]+([/?#][^[:space:][:cntrl:]]*)?$'::text) AND (length(url) <= 2048)))
);

ALTER TABLE ONLY data.org_webhooks FORCE ROW LEVEL SECURITY;


ALTER TABLE data.org_webhooks OWNER TO <migrator>;

--
-- Name: TABLE org_webhooks; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.org_webhooks IS 'One webhook per org that receives its staleness nudges; the secret signs each delivery (HMAC-SHA256) and is never returned by a read.';


--
-- Name: orgs; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.orgs (
    org_id text NOT NULL,
    display_name text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    org_no integer NOT NULL,
    session_ttl interval DEFAULT '24:00:00'::interval NOT NULL,
    default_owner text,
    stale_after interval DEFAULT '182 days'::interval NOT NULL,
    stale_window interval DEFAULT '90 days'::interval NOT NULL,
    stale_min_retrievals integer DEFAULT 5 NOT NULL,
    nudge_period interval DEFAULT '7 days'::interval NOT NULL,
    CONSTRAINT default_owner_named CHECK (((default_owner IS NULL) OR ((length(default_owner) >= 1) AND (length(default_owner) <= 256)))),
    CONSTRAINT nudge_period_positive CHECK ((nudge_period >= '01:00:00'::interval)),
    CONSTRAINT org_id_format CHECK ((org_id ~ '^[a-z0-9][a-z0-9_.-]{0,62}$'::text)),
    CONSTRAINT orgs_created_at_readable CHECK (data._readable_time(created_at, 'orgs.created_at'::text)),
    CONSTRAINT session_ttl_positive CHECK ((session_ttl > '00:00:00'::interval)),
    CONSTRAINT stale_after_positive CHECK ((stale_after > '00:00:00'::interval)),
    CONSTRAINT stale_min_retrievals_positive CHECK ((stale_min_retrievals >= 1)),
    CONSTRAINT stale_window_positive CHECK ((stale_window > '00:00:00'::interval))
);

ALTER TABLE ONLY data.orgs FORCE ROW LEVEL SECURITY;


ALTER TABLE data.orgs OWNER TO <migrator>;

--
-- Name: TABLE orgs; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.orgs IS 'Tenants. Every other row belongs to exactly one org.';


--
-- Name: COLUMN orgs.session_ttl; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.orgs.session_ttl IS 'Lifetime of a new session; expired sessions are never returned and are purged by `contexts sessions purge`.';


--
-- Name: COLUMN orgs.default_owner; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.orgs.default_owner IS 'Owner of what names none and matches no CODEOWNERS rule (R-DOC-3); null: such fragments are "unowned".';


--
-- Name: COLUMN orgs.stale_after; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.orgs.stale_after IS 'A fragment whose text is older than this and is often retrieved is stale (default six months).';


--
-- Name: COLUMN orgs.stale_window; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.orgs.stale_window IS 'How far back retrievals are counted for staleness.';


--
-- Name: COLUMN orgs.stale_min_retrievals; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.orgs.stale_min_retrievals IS 'Retrievals within stale_window that make an old fragment "often retrieved".';


--
-- Name: COLUMN orgs.nudge_period; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.orgs.nudge_period IS 'An owner is nudged about a stale fragment at most once per period (one outbox row per fragment and period).';


--
-- Name: orgs_org_no_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.orgs ALTER COLUMN org_no ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.orgs_org_no_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: owner_reassignments; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.owner_reassignments (
    reassignment_id bigint NOT NULL,
    org_id text NOT NULL,
    from_owner text NOT NULL,
    to_owner text NOT NULL,
    repo_id text,
    path_prefix text,
    documents integer NOT NULL,
    fragments integer NOT NULL,
    principal_id text NOT NULL,
    reassigned_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT owner_reassignments_reassigned_at_readable CHECK (data._readable_time(reassigned_at, 'owner_reassignments.reassigned_at'::text)),
    CONSTRAINT owner_reassignments_to_owner_check CHECK (((length(to_owner) >= 1) AND (length(to_owner) <= 256)))
);

ALTER TABLE ONLY data.owner_reassignments FORCE ROW LEVEL SECURITY;


ALTER TABLE data.owner_reassignments OWNER TO <migrator>;

--
-- Name: TABLE owner_reassignments; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.owner_reassignments IS 'Audit of bulk owner reassignments: who moved what from whom to whom, and how much.';


--
-- Name: owner_reassignments_reassignment_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.owner_reassignments ALTER COLUMN reassignment_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.owner_reassignments_reassignment_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: persona_vectors; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.persona_vectors (
    org_id text NOT NULL,
    persona_id text NOT NULL,
    model_id integer NOT NULL,
    description text NOT NULL,
    embedding extensions.vector NOT NULL,
    updated_by text NOT NULL,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT persona_vectors_updated_at_readable CHECK (data._readable_time(updated_at, 'persona_vectors.updated_at'::text))
);

ALTER TABLE ONLY data.persona_vectors FORCE ROW LEVEL SECURITY;


ALTER TABLE data.persona_vectors OWNER TO <migrator>;

--
-- Name: TABLE persona_vectors; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.persona_vectors IS 'The description of a persona''s ranking profile embedded with each model (unit vectors): evidence of what the persona cares about, with its own fragments (api.persona_vectors_set; docs/adr/0014).';


--
-- Name: COLUMN persona_vectors.description; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.persona_vectors.description IS 'The text embedded: the persona profile''s description when the vector was written.';


--
-- Name: personas; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.personas (
    org_id text NOT NULL,
    persona_id text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT persona_id_format CHECK ((persona_id ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'::text)),
    CONSTRAINT personas_created_at_readable CHECK (data._readable_time(created_at, 'personas.created_at'::text))
);

ALTER TABLE ONLY data.personas FORCE ROW LEVEL SECURITY;


ALTER TABLE data.personas OWNER TO <migrator>;

--
-- Name: TABLE personas; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.personas IS 'Persona scope, e.g. backend-sre: knowledge for one role of agent.';


--
-- Name: pins; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.pins (
    pin_id bigint NOT NULL,
    org_id text NOT NULL,
    repo_id text,
    persona_id text,
    session_id text,
    fragment_id bigint NOT NULL,
    pinned_by text NOT NULL,
    reason text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    expires_at timestamp with time zone,
    CONSTRAINT pins_check CHECK (((expires_at IS NULL) OR (expires_at > created_at))),
    CONSTRAINT pins_created_at_readable CHECK (data._readable_time(created_at, 'pins.created_at'::text)),
    CONSTRAINT pins_expires_at_readable CHECK (data._readable_time(expires_at, 'pins.expires_at'::text)),
    CONSTRAINT pins_reason_check CHECK (((length(reason) >= 1) AND (length(reason) <= 1000)))
);

ALTER TABLE ONLY data.pins FORCE ROW LEVEL SECURITY;


ALTER TABLE data.pins OWNER TO <migrator>;

--
-- Name: TABLE pins; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.pins IS 'Manual pins: a fragment composed first, whatever its relevance, in every request that sees the pin''s scope (api.pin_add, api.pins_list).';


--
-- Name: COLUMN pins.pinned_by; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.pins.pinned_by IS 'Principal that pinned it (it held a write grant on the pin''s scope).';


--
-- Name: COLUMN pins.expires_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.pins.expires_at IS 'After this time the pin is ignored (null: never).';


--
-- Name: pins_pin_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.pins ALTER COLUMN pin_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.pins_pin_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: principal_bindings; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE UNLOGGED TABLE data.principal_bindings (
    nonce text NOT NULL,
    backend_pid integer NOT NULL,
    xact_id xid8 NOT NULL,
    org_id text NOT NULL,
    principal_id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT principal_bindings_created_at_readable CHECK (data._readable_time(created_at, 'principal_bindings.created_at'::text))
);

ALTER TABLE ONLY data.principal_bindings FORCE ROW LEVEL SECURITY;


ALTER TABLE data.principal_bindings OWNER TO <migrator>;

--
-- Name: TABLE principal_bindings; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.principal_bindings IS 'Per-transaction principal bindings (unlogged, short-lived).';


--
-- Name: principals; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.principals (
    org_id text NOT NULL,
    principal_id text NOT NULL,
    kind text DEFAULT 'agent'::text NOT NULL,
    display_name text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    db_role name,
    disabled_at timestamp with time zone,
    CONSTRAINT principal_id_format CHECK ((principal_id ~ '^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$'::text)),
    CONSTRAINT principals_created_at_readable CHECK (data._readable_time(created_at, 'principals.created_at'::text)),
    CONSTRAINT principals_disabled_at_readable CHECK (data._readable_time(disabled_at, 'principals.disabled_at'::text)),
    CONSTRAINT principals_kind_check CHECK ((kind = ANY (ARRAY['agent'::text, 'human'::text, 'service'::text])))
);

ALTER TABLE ONLY data.principals FORCE ROW LEVEL SECURITY;


ALTER TABLE data.principals OWNER TO <migrator>;

--
-- Name: TABLE principals; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.principals IS 'Who asks: agents, humans and service accounts of an org.';


--
-- Name: COLUMN principals.db_role; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.principals.db_role IS 'Login role mapped to this principal (analysts, auditors): its SQL sessions act as this principal.';


--
-- Name: ranking_profiles; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.ranking_profiles (
    org_id text NOT NULL,
    persona_id text,
    w_rerank double precision,
    w_freshness double precision,
    w_authority double precision,
    w_pinned double precision,
    w_persona double precision,
    halflife_days jsonb DEFAULT '{}'::jsonb NOT NULL,
    description text,
    updated_by text NOT NULL,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT ranking_profiles_description_check CHECK ((length(description) <= 2000)),
    CONSTRAINT ranking_profiles_halflife_days_check CHECK ((jsonb_typeof(halflife_days) = 'object'::text)),
    CONSTRAINT ranking_profiles_updated_at_readable CHECK (data._readable_time(updated_at, 'ranking_profiles.updated_at'::text)),
    CONSTRAINT ranking_profiles_w_authority_check CHECK ((w_authority >= (0)::double precision)),
    CONSTRAINT ranking_profiles_w_freshness_check CHECK ((w_freshness >= (0)::double precision)),
    CONSTRAINT ranking_profiles_w_persona_check CHECK ((w_persona >= (0)::double precision)),
    CONSTRAINT ranking_profiles_w_pinned_check CHECK ((w_pinned >= (0)::double precision)),
    CONSTRAINT ranking_profiles_w_rerank_check CHECK ((w_rerank >= (0)::double precision))
);

ALTER TABLE ONLY data.ranking_profiles FORCE ROW LEVEL SECURITY;


ALTER TABLE data.ranking_profiles OWNER TO <migrator>;

--
-- Name: TABLE ranking_profiles; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.ranking_profiles IS 'Blend weights and freshness half-lives per kind: an org default (persona_id null) or a persona''s (R-RANK-1; api.ranking_profile_set). Null weights and absent kinds inherit.';


--
-- Name: COLUMN ranking_profiles.halflife_days; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.ranking_profiles.halflife_days IS 'Freshness half-life in days per document kind ({"default": 90, "policy": 365}); "default" covers the kinds not named.';


--
-- Name: COLUMN ranking_profiles.updated_by; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.ranking_profiles.updated_by IS 'Principal that set it (it held a write grant on the org, or on the persona).';


--
-- Name: repos; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.repos (
    org_id text NOT NULL,
    repo_id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT repo_id_format CHECK ((repo_id ~ '^[A-Za-z0-9][A-Za-z0-9_./-]{0,127}$'::text)),
    CONSTRAINT repos_created_at_readable CHECK (data._readable_time(created_at, 'repos.created_at'::text))
);

ALTER TABLE ONLY data.repos FORCE ROW LEVEL SECURITY;


ALTER TABLE data.repos OWNER TO <migrator>;

--
-- Name: TABLE repos; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.repos IS 'Repository scope: knowledge that inherits a repository''s access policy.';


--
-- Name: sessions; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.sessions (
    org_id text NOT NULL,
    session_id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone,
    CONSTRAINT session_id_format CHECK ((session_id ~ '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$'::text)),
    CONSTRAINT sessions_created_at_readable CHECK (data._readable_time(created_at, 'sessions.created_at'::text)),
    CONSTRAINT sessions_expires_at_readable CHECK (data._readable_time(expires_at, 'sessions.expires_at'::text))
);

ALTER TABLE ONLY data.sessions FORCE ROW LEVEL SECURITY;


ALTER TABLE data.sessions OWNER TO <migrator>;

--
-- Name: TABLE sessions; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.sessions IS 'Session scope: ephemeral notes visible only inside that session.';


--
-- Name: alembic_version; Type: TABLE; Schema: public; Owner: <migrator>
--

CREATE TABLE public.alembic_version (
    version_num character varying(32) NOT NULL
);


ALTER TABLE public.alembic_version OWNER TO <migrator>;

--
-- Name: contexts_reapplied; Type: TABLE; Schema: public; Owner: <migrator>
--

CREATE TABLE public.contexts_reapplied (
    singleton boolean DEFAULT true NOT NULL,
    digest text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT contexts_reapplied_singleton_check CHECK (singleton)
);


ALTER TABLE public.contexts_reapplied OWNER TO <migrator>;

--
-- Name: TABLE contexts_reapplied; Type: COMMENT; Schema: public; Owner: <migrator>
--

COMMENT ON TABLE public.contexts_reapplied IS 'Digest of the SQL files migrate() last re-applied (functions, views, policies, grants).';


--
-- Name: fragments fragment_id; Type: DEFAULT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragments ALTER COLUMN fragment_id SET DEFAULT nextval('data.fragment_id_seq'::regclass);


--
-- Name: api_keys api_keys_key_hash_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.api_keys
    ADD CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash);


--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (key_id);


--
-- Name: authority_refreshes authority_refreshes_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.authority_refreshes
    ADD CONSTRAINT authority_refreshes_pkey PRIMARY KEY (refreshed_at);


--
-- Name: binding_keys binding_keys_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.binding_keys
    ADD CONSTRAINT binding_keys_pkey PRIMARY KEY (key_id);


--
-- Name: bm25_corpus bm25_corpus_group_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.bm25_corpus
    ADD CONSTRAINT bm25_corpus_group_key UNIQUE NULLS NOT DISTINCT (org_id, repo_id, persona_id, session_id);


--
-- Name: bm25_postings bm25_postings_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.bm25_postings
    ADD CONSTRAINT bm25_postings_pkey PRIMARY KEY (org_id, term, fragment_id) INCLUDE (tf, dl, repo_id, persona_id, session_id);


--
-- Name: bm25_terms bm25_terms_group_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.bm25_terms
    ADD CONSTRAINT bm25_terms_group_key UNIQUE NULLS NOT DISTINCT (org_id, term, repo_id, persona_id, session_id);


--
-- Name: context_members context_members_context_id_version_ordinal_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_members
    ADD CONSTRAINT context_members_context_id_version_ordinal_key UNIQUE (context_id, version, ordinal);


--
-- Name: context_members context_members_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_members
    ADD CONSTRAINT context_members_pkey PRIMARY KEY (context_id, version, fragment_id);


--
-- Name: context_rules context_rules_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_rules
    ADD CONSTRAINT context_rules_pkey PRIMARY KEY (rule_id);


--
-- Name: context_subscriptions context_subscriptions_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_subscriptions
    ADD CONSTRAINT context_subscriptions_pkey PRIMARY KEY (subscription_id);


--
-- Name: context_versions context_versions_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_versions
    ADD CONSTRAINT context_versions_pkey PRIMARY KEY (context_id, version);


--
-- Name: contexts contexts_context_id_org_id_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.contexts
    ADD CONSTRAINT contexts_context_id_org_id_key UNIQUE (context_id, org_id);


--
-- Name: contexts contexts_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.contexts
    ADD CONSTRAINT contexts_pkey PRIMARY KEY (context_id);


--
-- Name: document_versions document_versions_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.document_versions
    ADD CONSTRAINT document_versions_pkey PRIMARY KEY (doc_id, version);


--
-- Name: documents documents_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.documents
    ADD CONSTRAINT documents_pkey PRIMARY KEY (doc_id);


--
-- Name: embedding_models embedding_models_namespace_generation_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.embedding_models
    ADD CONSTRAINT embedding_models_namespace_generation_key UNIQUE (namespace, generation);


--
-- Name: embedding_models embedding_models_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.embedding_models
    ADD CONSTRAINT embedding_models_pkey PRIMARY KEY (model_id);


--
-- Name: embedding_namespaces embedding_namespaces_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.embedding_namespaces
    ADD CONSTRAINT embedding_namespaces_pkey PRIMARY KEY (namespace);


--
-- Name: embeddings embeddings_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.embeddings
    ADD CONSTRAINT embeddings_pkey PRIMARY KEY (fragment_id, model_id, org_id);


--
-- Name: eval_figures eval_figures_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.eval_figures
    ADD CONSTRAINT eval_figures_key UNIQUE NULLS NOT DISTINCT (run_id, dataset, split, stage, scope, metric);


--
-- Name: eval_replays eval_replays_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.eval_replays
    ADD CONSTRAINT eval_replays_pkey PRIMARY KEY (run_id, ordinal);


--
-- Name: eval_runs eval_runs_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.eval_runs
    ADD CONSTRAINT eval_runs_pkey PRIMARY KEY (run_id);


--
-- Name: fragment_links fragment_links_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_links
    ADD CONSTRAINT fragment_links_pkey PRIMARY KEY (link_id);


--
-- Name: fragment_returns fragment_returns_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_returns
    ADD CONSTRAINT fragment_returns_pkey PRIMARY KEY (org_id, trace_id, fragment_id);


--
-- Name: fragment_sources fragment_sources_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_sources
    ADD CONSTRAINT fragment_sources_pkey PRIMARY KEY (doc_id, doc_version, ordinal);


--
-- Name: fragments fragments_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragments
    ADD CONSTRAINT fragments_pkey PRIMARY KEY (fragment_id, org_id);


--
-- Name: fragments fragments_reading_size; Type: CHECK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragments
    ADD CONSTRAINT fragments_reading_size CHECK ((octet_length(reading) <= 65536)) NOT VALID;


--
-- Name: git_syncs git_syncs_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.git_syncs
    ADD CONSTRAINT git_syncs_pkey PRIMARY KEY (org_id, repo_id);


--
-- Name: grants grants_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.grants
    ADD CONSTRAINT grants_pkey PRIMARY KEY (org_id, principal_id, scope_kind, scope_id);


--
-- Name: idempotent_writes idempotent_writes_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.idempotent_writes
    ADD CONSTRAINT idempotent_writes_pkey PRIMARY KEY (org_id, principal_id, idempotency_key);


--
-- Name: model_replays model_replays_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.model_replays
    ADD CONSTRAINT model_replays_pkey PRIMARY KEY (replay_id);


--
-- Name: nudge_deliveries nudge_deliveries_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.nudge_deliveries
    ADD CONSTRAINT nudge_deliveries_pkey PRIMARY KEY (delivery_id);


--
-- Name: nudge_outbox nudge_once_per_period; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.nudge_outbox
    ADD CONSTRAINT nudge_once_per_period UNIQUE (org_id, fragment_id, period_start);


--
-- Name: nudge_outbox nudge_outbox_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.nudge_outbox
    ADD CONSTRAINT nudge_outbox_pkey PRIMARY KEY (nudge_id);


--
-- Name: org_webhooks org_webhooks_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.org_webhooks
    ADD CONSTRAINT org_webhooks_pkey PRIMARY KEY (org_id);


--
-- Name: orgs orgs_org_no_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.orgs
    ADD CONSTRAINT orgs_org_no_key UNIQUE (org_no);


--
-- Name: orgs orgs_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.orgs
    ADD CONSTRAINT orgs_pkey PRIMARY KEY (org_id);


--
-- Name: owner_reassignments owner_reassignments_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.owner_reassignments
    ADD CONSTRAINT owner_reassignments_pkey PRIMARY KEY (reassignment_id);


--
-- Name: persona_vectors persona_vectors_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.persona_vectors
    ADD CONSTRAINT persona_vectors_pkey PRIMARY KEY (org_id, persona_id, model_id);


--
-- Name: personas personas_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.personas
    ADD CONSTRAINT personas_pkey PRIMARY KEY (org_id, persona_id);


--
-- Name: pins pins_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.pins
    ADD CONSTRAINT pins_pkey PRIMARY KEY (pin_id);


--
-- Name: principal_bindings principal_bindings_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.principal_bindings
    ADD CONSTRAINT principal_bindings_pkey PRIMARY KEY (nonce);


--
-- Name: principals principals_db_role_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.principals
    ADD CONSTRAINT principals_db_role_key UNIQUE (db_role);


--
-- Name: principals principals_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.principals
    ADD CONSTRAINT principals_pkey PRIMARY KEY (org_id, principal_id);


--
-- Name: repos repos_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.repos
    ADD CONSTRAINT repos_pkey PRIMARY KEY (org_id, repo_id);


--
-- Name: retrieval_traces retrieval_traces_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.retrieval_traces
    ADD CONSTRAINT retrieval_traces_pkey PRIMARY KEY (trace_id);


--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (org_id, session_id);


--
-- Name: alembic_version alembic_version_pkc; Type: CONSTRAINT; Schema: public; Owner: <migrator>
--

ALTER TABLE ONLY public.alembic_version
    ADD CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num);


--
-- Name: contexts_reapplied contexts_reapplied_pkey; Type: CONSTRAINT; Schema: public; Owner: <migrator>
--

ALTER TABLE ONLY public.contexts_reapplied
    ADD CONSTRAINT contexts_reapplied_pkey PRIMARY KEY (singleton);


--
-- Name: bm25_postings_fragment; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX bm25_postings_fragment ON ONLY data.bm25_postings USING btree (fragment_id);


--
-- Name: context_members_fragment; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX context_members_fragment ON data.context_members USING btree (fragment_id);


--
-- Name: context_rules_name; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX context_rules_name ON data.context_rules USING btree (org_id, COALESCE(repo_id, ''::text), name);


--
-- Name: context_rules_scope; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX context_rules_scope ON data.context_rules USING btree (org_id, repo_id) WHERE enabled;


--
-- Name: context_subscriptions_live; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX context_subscriptions_live ON data.context_subscriptions USING btree (context_id, COALESCE(version, 0), subscriber_org_id, COALESCE(subscriber_repo_id, ''::text)) WHERE (revoked_at IS NULL);


--
-- Name: context_subscriptions_subscriber; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX context_subscriptions_subscriber ON data.context_subscriptions USING btree (subscriber_org_id) WHERE (revoked_at IS NULL);


--
-- Name: contexts_live_name; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX contexts_live_name ON data.contexts USING btree (org_id, COALESCE(repo_id, ''::text), COALESCE(persona_id, ''::text), COALESCE(session_id, ''::text), name) WHERE (retired_at IS NULL);


--
-- Name: documents_identity; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX documents_identity ON data.documents USING btree (org_id, COALESCE(repo_id, ''::text), COALESCE(persona_id, ''::text), COALESCE(session_id, ''::text), path);


--
-- Name: documents_link_keys; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX documents_link_keys ON data.documents USING gin (link_keys);


--
-- Name: embedding_models_one_active; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX embedding_models_one_active ON data.embedding_models USING btree (namespace) WHERE (status = 'active'::text);


--
-- Name: embedding_models_one_shadow; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX embedding_models_one_shadow ON data.embedding_models USING btree (namespace) WHERE (status = 'shadow'::text);


--
-- Name: embeddings_model_org; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX embeddings_model_org ON ONLY data.embeddings USING btree (model_id, org_id);


--
-- Name: eval_replays_org; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX eval_replays_org ON data.eval_replays USING btree (org_id, run_id);


--
-- Name: eval_runs_finished; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX eval_runs_finished ON data.eval_runs USING btree (finished_at);


--
-- Name: fragment_authority_key; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX fragment_authority_key ON data.fragment_authority USING btree (org_id, fragment_id);


--
-- Name: fragment_links_doc; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragment_links_doc ON data.fragment_links USING btree (doc_id);


--
-- Name: fragment_links_identity; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX fragment_links_identity ON data.fragment_links USING btree (fragment_id, doc_id, link_type, target_key, COALESCE(target_name, ''::text), COALESCE(target_anchor, ''::text), COALESCE(target_repo, ''::text));


--
-- Name: fragment_links_key; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragment_links_key ON data.fragment_links USING btree (org_id, target_key);


--
-- Name: fragment_links_superseded; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragment_links_superseded ON data.fragment_links USING btree (target_doc_id) WHERE (link_type = ANY (ARRAY['supersedes'::text, 'superseded_by'::text]));


--
-- Name: fragment_links_superseding; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragment_links_superseding ON data.fragment_links USING btree (doc_id) WHERE (link_type = ANY (ARRAY['supersedes'::text, 'superseded_by'::text]));


--
-- Name: fragment_links_target_doc; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragment_links_target_doc ON data.fragment_links USING btree (target_doc_id);


--
-- Name: fragment_returns_window; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragment_returns_window ON data.fragment_returns USING btree (org_id, returned_at) INCLUDE (fragment_id);


--
-- Name: fragment_sources_fragment; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragment_sources_fragment ON data.fragment_sources USING btree (fragment_id) WHERE (retired_at IS NULL);


--
-- Name: fragment_sources_fragment_all; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragment_sources_fragment_all ON data.fragment_sources USING btree (fragment_id);


--
-- Name: fragments_content_hash; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragments_content_hash ON ONLY data.fragments USING btree (org_id, content_hash);


--
-- Name: fragments_doc; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragments_doc ON ONLY data.fragments USING btree (doc_id);


--
-- Name: fragments_persona_recent; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragments_persona_recent ON ONLY data.fragments USING btree (org_id, persona_id, updated_at DESC, fragment_id DESC) WHERE ((persona_id IS NOT NULL) AND active);


--
-- Name: fragments_simhash_band0; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragments_simhash_band0 ON ONLY data.fragments USING btree (org_id, simhash_band0);


--
-- Name: fragments_simhash_band1; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragments_simhash_band1 ON ONLY data.fragments USING btree (org_id, simhash_band1);


--
-- Name: fragments_simhash_band2; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragments_simhash_band2 ON ONLY data.fragments USING btree (org_id, simhash_band2);


--
-- Name: fragments_simhash_band3; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragments_simhash_band3 ON ONLY data.fragments USING btree (org_id, simhash_band3);


--
-- Name: fragments_tsv; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragments_tsv ON ONLY data.fragments USING gin (tsv);


--
-- Name: fragments_windowed; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragments_windowed ON ONLY data.fragments USING btree (org_id) WHERE ((valid_from IS NOT NULL) OR (valid_until IS NOT NULL));


--
-- Name: idempotent_writes_age; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX idempotent_writes_age ON data.idempotent_writes USING btree (org_id, created_at);


--
-- Name: model_replays_model; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX model_replays_model ON data.model_replays USING btree (model_id, org_id, replayed_at);


--
-- Name: nudge_deliveries_nudge; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX nudge_deliveries_nudge ON data.nudge_deliveries USING btree (nudge_id);


--
-- Name: nudge_outbox_due; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX nudge_outbox_due ON data.nudge_outbox USING btree (next_attempt_at) WHERE (delivered_at IS NULL);


--
-- Name: owner_reassignments_org; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX owner_reassignments_org ON data.owner_reassignments USING btree (org_id, reassigned_at DESC);


--
-- Name: pins_fragment; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX pins_fragment ON data.pins USING btree (fragment_id);


--
-- Name: pins_identity; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX pins_identity ON data.pins USING btree (org_id, COALESCE(repo_id, ''::text), COALESCE(persona_id, ''::text), COALESCE(session_id, ''::text), fragment_id);


--
-- Name: principal_bindings_backend; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX principal_bindings_backend ON data.principal_bindings USING btree (backend_pid);


--
-- Name: ranking_profiles_identity; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX ranking_profiles_identity ON data.ranking_profiles USING btree (org_id, COALESCE(persona_id, ''::text));


--
-- Name: retrieval_traces_org_created; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX retrieval_traces_org_created ON data.retrieval_traces USING btree (org_id, created_at DESC);


--
-- Name: document_retrievals _RETURN; Type: RULE; Schema: api; Owner: <migrator>
--

CREATE OR REPLACE VIEW api.document_retrievals WITH (security_invoker='true') AS
 SELECT r.org_id,
    r.doc_id,
    d.path,
    d.kind,
    d.repo_id,
    d.persona_id,
    d.session_id,
    d.current_version,
    (sum(r.retrievals))::bigint AS fragments_returned,
    count(*) FILTER (WHERE (r.retrievals > 0)) AS fragments_retrieved,
    (sum(r.candidacies))::bigint AS candidacies,
    max(r.last_retrieved_at) AS last_retrieved_at
   FROM (api.fragment_retrievals r
     JOIN data.documents d ON ((d.doc_id = r.doc_id)))
  GROUP BY r.org_id, r.doc_id, d.doc_id;


--
-- Name: document_version_counts _RETURN; Type: RULE; Schema: api; Owner: <migrator>
--

CREATE OR REPLACE VIEW api.document_version_counts WITH (security_invoker='true') AS
 SELECT d.doc_id,
    d.org_id,
    d.repo_id,
    d.persona_id,
    d.session_id,
    d.path,
    d.kind,
    d.current_version,
    count(*) AS versions,
    min(v.created_at) AS first_version_at,
    max(v.created_at) AS last_version_at
   FROM (data.documents d
     JOIN data.document_versions v ON ((v.doc_id = d.doc_id)))
  GROUP BY d.doc_id;


--
-- Name: near_duplicate_clusters _RETURN; Type: RULE; Schema: api; Owner: <migrator>
--

CREATE OR REPLACE VIEW api.near_duplicate_clusters WITH (security_invoker='true') AS
 SELECT f.fragment_id,
    f.org_id,
    f.repo_id,
    f.persona_id,
    f.session_id,
    f.namespace,
    f.kind,
    f.owner,
    count(*) AS sources,
    count(*) FILTER (WHERE (s.content_hash = f.content_hash)) AS exact_sources,
    count(*) FILTER (WHERE (s.content_hash <> f.content_hash)) AS near_sources,
    count(DISTINCT s.doc_id) AS documents,
    array_agg(DISTINCT d.path ORDER BY d.path) AS paths
   FROM ((data.fragments f
     JOIN data.fragment_sources s ON (((s.fragment_id = f.fragment_id) AND (s.org_id = f.org_id) AND (s.retired_at IS NULL))))
     JOIN data.documents d ON ((d.doc_id = s.doc_id)))
  WHERE f.active
  GROUP BY f.org_id, f.fragment_id
 HAVING (count(*) > 1);


--
-- Name: context_subscriptions context_subscriptions_shareable; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER context_subscriptions_shareable BEFORE INSERT OR UPDATE OF context_id, revoked_at ON data.context_subscriptions FOR EACH ROW EXECUTE FUNCTION data._check_subscription();


--
-- Name: fragment_sources fragment_sources_deleted; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER fragment_sources_deleted AFTER DELETE ON data.fragment_sources REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION data._on_sources_deleted();


--
-- Name: fragments fragments_bm25_delete; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER fragments_bm25_delete AFTER DELETE ON data.fragments REFERENCING OLD TABLE AS old_fragments FOR EACH STATEMENT EXECUTE FUNCTION data._bm25_on_fragment_change();


--
-- Name: fragments fragments_bm25_insert; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER fragments_bm25_insert AFTER INSERT ON data.fragments REFERENCING NEW TABLE AS new_fragments FOR EACH STATEMENT EXECUTE FUNCTION data._bm25_on_fragment_change();


--
-- Name: fragments fragments_bm25_update; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER fragments_bm25_update AFTER UPDATE ON data.fragments REFERENCING OLD TABLE AS old_fragments NEW TABLE AS new_fragments FOR EACH STATEMENT EXECUTE FUNCTION data._bm25_on_fragment_change();


--
-- Name: fragments fragments_reading_text; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER fragments_reading_text BEFORE INSERT OR UPDATE OF text, reading ON data.fragments FOR EACH ROW EXECUTE FUNCTION data._check_reading();


--
-- Name: retrieval_traces retrieval_traces_returns; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER retrieval_traces_returns AFTER INSERT ON data.retrieval_traces FOR EACH ROW EXECUTE FUNCTION data._record_returns();


--
-- Name: api_keys api_keys_org_id_principal_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.api_keys
    ADD CONSTRAINT api_keys_org_id_principal_id_fkey FOREIGN KEY (org_id, principal_id) REFERENCES data.principals(org_id, principal_id) ON DELETE CASCADE;


--
-- Name: bm25_corpus bm25_corpus_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.bm25_corpus
    ADD CONSTRAINT bm25_corpus_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: bm25_postings bm25_postings_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE data.bm25_postings
    ADD CONSTRAINT bm25_postings_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: bm25_terms bm25_terms_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.bm25_terms
    ADD CONSTRAINT bm25_terms_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: context_members context_members_context_id_version_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_members
    ADD CONSTRAINT context_members_context_id_version_fkey FOREIGN KEY (context_id, version) REFERENCES data.context_versions(context_id, version) ON DELETE CASCADE;


--
-- Name: context_rules context_rules_context_id_context_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_rules
    ADD CONSTRAINT context_rules_context_id_context_org_id_fkey FOREIGN KEY (context_id, context_org_id) REFERENCES data.contexts(context_id, org_id) ON DELETE CASCADE;


--
-- Name: context_rules context_rules_context_id_version_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_rules
    ADD CONSTRAINT context_rules_context_id_version_fkey FOREIGN KEY (context_id, version) REFERENCES data.context_versions(context_id, version) ON DELETE CASCADE;


--
-- Name: context_rules context_rules_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_rules
    ADD CONSTRAINT context_rules_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: context_rules context_rules_org_id_repo_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_rules
    ADD CONSTRAINT context_rules_org_id_repo_id_fkey FOREIGN KEY (org_id, repo_id) REFERENCES data.repos(org_id, repo_id) ON DELETE CASCADE;


--
-- Name: context_subscriptions context_subscriptions_context_id_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_subscriptions
    ADD CONSTRAINT context_subscriptions_context_id_org_id_fkey FOREIGN KEY (context_id, org_id) REFERENCES data.contexts(context_id, org_id) ON DELETE CASCADE;


--
-- Name: context_subscriptions context_subscriptions_context_id_version_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_subscriptions
    ADD CONSTRAINT context_subscriptions_context_id_version_fkey FOREIGN KEY (context_id, version) REFERENCES data.context_versions(context_id, version) ON DELETE CASCADE;


--
-- Name: context_subscriptions context_subscriptions_subscriber_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_subscriptions
    ADD CONSTRAINT context_subscriptions_subscriber_org_id_fkey FOREIGN KEY (subscriber_org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: context_versions context_versions_context_id_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_versions
    ADD CONSTRAINT context_versions_context_id_org_id_fkey FOREIGN KEY (context_id, org_id) REFERENCES data.contexts(context_id, org_id) ON DELETE CASCADE;


--
-- Name: contexts contexts_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.contexts
    ADD CONSTRAINT contexts_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: contexts contexts_org_id_persona_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.contexts
    ADD CONSTRAINT contexts_org_id_persona_id_fkey FOREIGN KEY (org_id, persona_id) REFERENCES data.personas(org_id, persona_id) ON DELETE CASCADE;


--
-- Name: contexts contexts_org_id_repo_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.contexts
    ADD CONSTRAINT contexts_org_id_repo_id_fkey FOREIGN KEY (org_id, repo_id) REFERENCES data.repos(org_id, repo_id) ON DELETE CASCADE;


--
-- Name: contexts contexts_org_id_session_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.contexts
    ADD CONSTRAINT contexts_org_id_session_id_fkey FOREIGN KEY (org_id, session_id) REFERENCES data.sessions(org_id, session_id) ON DELETE CASCADE;


--
-- Name: document_versions document_versions_doc_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.document_versions
    ADD CONSTRAINT document_versions_doc_id_fkey FOREIGN KEY (doc_id) REFERENCES data.documents(doc_id) ON DELETE CASCADE;


--
-- Name: documents documents_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.documents
    ADD CONSTRAINT documents_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: documents documents_org_id_persona_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.documents
    ADD CONSTRAINT documents_org_id_persona_id_fkey FOREIGN KEY (org_id, persona_id) REFERENCES data.personas(org_id, persona_id) ON DELETE CASCADE;


--
-- Name: documents documents_org_id_repo_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.documents
    ADD CONSTRAINT documents_org_id_repo_id_fkey FOREIGN KEY (org_id, repo_id) REFERENCES data.repos(org_id, repo_id) ON DELETE CASCADE;


--
-- Name: documents documents_org_id_session_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.documents
    ADD CONSTRAINT documents_org_id_session_id_fkey FOREIGN KEY (org_id, session_id) REFERENCES data.sessions(org_id, session_id) ON DELETE CASCADE;


--
-- Name: embedding_models embedding_models_namespace_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.embedding_models
    ADD CONSTRAINT embedding_models_namespace_fkey FOREIGN KEY (namespace) REFERENCES data.embedding_namespaces(namespace);


--
-- Name: embeddings embeddings_fragment_id_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE data.embeddings
    ADD CONSTRAINT embeddings_fragment_id_org_id_fkey FOREIGN KEY (fragment_id, org_id) REFERENCES data.fragments(fragment_id, org_id) ON DELETE CASCADE;


--
-- Name: embeddings embeddings_model_id_fkey1; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE data.embeddings
    ADD CONSTRAINT embeddings_model_id_fkey1 FOREIGN KEY (model_id) REFERENCES data.embedding_models(model_id);


--
-- Name: embeddings embeddings_org_id_fkey1; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE data.embeddings
    ADD CONSTRAINT embeddings_org_id_fkey1 FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: eval_figures eval_figures_run_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.eval_figures
    ADD CONSTRAINT eval_figures_run_id_fkey FOREIGN KEY (run_id) REFERENCES data.eval_runs(run_id) ON DELETE CASCADE;


--
-- Name: eval_replays eval_replays_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.eval_replays
    ADD CONSTRAINT eval_replays_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: eval_replays eval_replays_run_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.eval_replays
    ADD CONSTRAINT eval_replays_run_id_fkey FOREIGN KEY (run_id) REFERENCES data.eval_runs(run_id) ON DELETE CASCADE;


--
-- Name: fragment_links fragment_links_doc_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_links
    ADD CONSTRAINT fragment_links_doc_id_fkey FOREIGN KEY (doc_id) REFERENCES data.documents(doc_id) ON DELETE CASCADE;


--
-- Name: fragment_links fragment_links_fragment_id_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_links
    ADD CONSTRAINT fragment_links_fragment_id_org_id_fkey FOREIGN KEY (fragment_id, org_id) REFERENCES data.fragments(fragment_id, org_id) ON DELETE CASCADE;


--
-- Name: fragment_links fragment_links_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_links
    ADD CONSTRAINT fragment_links_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: fragment_links fragment_links_target_doc_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_links
    ADD CONSTRAINT fragment_links_target_doc_id_fkey FOREIGN KEY (target_doc_id) REFERENCES data.documents(doc_id) ON DELETE SET NULL;


--
-- Name: fragment_returns fragment_returns_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_returns
    ADD CONSTRAINT fragment_returns_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: fragment_returns fragment_returns_trace_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_returns
    ADD CONSTRAINT fragment_returns_trace_id_fkey FOREIGN KEY (trace_id) REFERENCES data.retrieval_traces(trace_id) ON DELETE CASCADE;


--
-- Name: fragment_sources fragment_sources_doc_id_doc_version_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_sources
    ADD CONSTRAINT fragment_sources_doc_id_doc_version_fkey FOREIGN KEY (doc_id, doc_version) REFERENCES data.document_versions(doc_id, version) ON DELETE CASCADE;


--
-- Name: fragment_sources fragment_sources_fragment_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_sources
    ADD CONSTRAINT fragment_sources_fragment_fkey FOREIGN KEY (fragment_id, org_id) REFERENCES data.fragments(fragment_id, org_id) ON DELETE CASCADE;


--
-- Name: fragments fragments_doc_id_doc_version_fkey1; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragments
    ADD CONSTRAINT fragments_doc_id_doc_version_fkey1 FOREIGN KEY (doc_id, doc_version) REFERENCES data.document_versions(doc_id, version) ON DELETE SET NULL;


--
-- Name: fragments fragments_namespace_fkey1; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragments
    ADD CONSTRAINT fragments_namespace_fkey1 FOREIGN KEY (namespace) REFERENCES data.embedding_namespaces(namespace);


--
-- Name: fragments fragments_org_id_fkey1; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragments
    ADD CONSTRAINT fragments_org_id_fkey1 FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: git_syncs git_syncs_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.git_syncs
    ADD CONSTRAINT git_syncs_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: git_syncs git_syncs_org_id_repo_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.git_syncs
    ADD CONSTRAINT git_syncs_org_id_repo_id_fkey FOREIGN KEY (org_id, repo_id) REFERENCES data.repos(org_id, repo_id) ON DELETE CASCADE;


--
-- Name: grants grants_org_id_principal_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.grants
    ADD CONSTRAINT grants_org_id_principal_id_fkey FOREIGN KEY (org_id, principal_id) REFERENCES data.principals(org_id, principal_id) ON DELETE CASCADE;


--
-- Name: idempotent_writes idempotent_writes_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.idempotent_writes
    ADD CONSTRAINT idempotent_writes_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: model_replays model_replays_model_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.model_replays
    ADD CONSTRAINT model_replays_model_id_fkey FOREIGN KEY (model_id) REFERENCES data.embedding_models(model_id);


--
-- Name: model_replays model_replays_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.model_replays
    ADD CONSTRAINT model_replays_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: nudge_deliveries nudge_deliveries_nudge_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.nudge_deliveries
    ADD CONSTRAINT nudge_deliveries_nudge_id_fkey FOREIGN KEY (nudge_id) REFERENCES data.nudge_outbox(nudge_id) ON DELETE CASCADE;


--
-- Name: nudge_deliveries nudge_deliveries_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.nudge_deliveries
    ADD CONSTRAINT nudge_deliveries_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: nudge_outbox nudge_outbox_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.nudge_outbox
    ADD CONSTRAINT nudge_outbox_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: org_webhooks org_webhooks_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.org_webhooks
    ADD CONSTRAINT org_webhooks_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: owner_reassignments owner_reassignments_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.owner_reassignments
    ADD CONSTRAINT owner_reassignments_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: persona_vectors persona_vectors_model_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.persona_vectors
    ADD CONSTRAINT persona_vectors_model_id_fkey FOREIGN KEY (model_id) REFERENCES data.embedding_models(model_id) ON DELETE CASCADE;


--
-- Name: persona_vectors persona_vectors_org_id_persona_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.persona_vectors
    ADD CONSTRAINT persona_vectors_org_id_persona_id_fkey FOREIGN KEY (org_id, persona_id) REFERENCES data.personas(org_id, persona_id) ON DELETE CASCADE;


--
-- Name: personas personas_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.personas
    ADD CONSTRAINT personas_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: pins pins_fragment_id_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.pins
    ADD CONSTRAINT pins_fragment_id_org_id_fkey FOREIGN KEY (fragment_id, org_id) REFERENCES data.fragments(fragment_id, org_id) ON DELETE CASCADE;


--
-- Name: pins pins_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.pins
    ADD CONSTRAINT pins_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: pins pins_org_id_persona_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.pins
    ADD CONSTRAINT pins_org_id_persona_id_fkey FOREIGN KEY (org_id, persona_id) REFERENCES data.personas(org_id, persona_id) ON DELETE CASCADE;


--
-- Name: pins pins_org_id_repo_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.pins
    ADD CONSTRAINT pins_org_id_repo_id_fkey FOREIGN KEY (org_id, repo_id) REFERENCES data.repos(org_id, repo_id) ON DELETE CASCADE;


--
-- Name: pins pins_org_id_session_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.pins
    ADD CONSTRAINT pins_org_id_session_id_fkey FOREIGN KEY (org_id, session_id) REFERENCES data.sessions(org_id, session_id) ON DELETE CASCADE;


--
-- Name: principals principals_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.principals
    ADD CONSTRAINT principals_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: ranking_profiles ranking_profiles_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.ranking_profiles
    ADD CONSTRAINT ranking_profiles_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: ranking_profiles ranking_profiles_org_id_persona_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.ranking_profiles
    ADD CONSTRAINT ranking_profiles_org_id_persona_id_fkey FOREIGN KEY (org_id, persona_id) REFERENCES data.personas(org_id, persona_id) ON DELETE CASCADE;


--
-- Name: repos repos_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.repos
    ADD CONSTRAINT repos_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: retrieval_traces retrieval_traces_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.retrieval_traces
    ADD CONSTRAINT retrieval_traces_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: sessions sessions_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.sessions
    ADD CONSTRAINT sessions_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: api_keys; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.api_keys ENABLE ROW LEVEL SECURITY;

--
-- Name: binding_keys; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.binding_keys ENABLE ROW LEVEL SECURITY;

--
-- Name: bm25_corpus; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.bm25_corpus ENABLE ROW LEVEL SECURITY;

--
-- Name: bm25_postings; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.bm25_postings ENABLE ROW LEVEL SECURITY;

--
-- Name: bm25_terms; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.bm25_terms ENABLE ROW LEVEL SECURITY;

--
-- Name: context_members; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.context_members ENABLE ROW LEVEL SECURITY;

--
-- Name: context_rules; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.context_rules ENABLE ROW LEVEL SECURITY;

--
-- Name: context_subscriptions; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.context_subscriptions ENABLE ROW LEVEL SECURITY;

--
-- Name: context_versions; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.context_versions ENABLE ROW LEVEL SECURITY;

--
-- Name: contexts; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.contexts ENABLE ROW LEVEL SECURITY;

--
-- Name: document_versions; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.document_versions ENABLE ROW LEVEL SECURITY;

--
-- Name: documents; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.documents ENABLE ROW LEVEL SECURITY;

--
-- Name: embeddings; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.embeddings ENABLE ROW LEVEL SECURITY;

--
-- Name: eval_replays; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.eval_replays ENABLE ROW LEVEL SECURITY;

--
-- Name: fragment_links; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragment_links ENABLE ROW LEVEL SECURITY;

--
-- Name: fragment_returns; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragment_returns ENABLE ROW LEVEL SECURITY;

--
-- Name: fragment_sources; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragment_sources ENABLE ROW LEVEL SECURITY;

--
-- Name: fragments; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragments ENABLE ROW LEVEL SECURITY;

--
-- Name: git_syncs; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.git_syncs ENABLE ROW LEVEL SECURITY;

--
-- Name: sessions granted_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY granted_read ON data.sessions FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[]))));


--
-- Name: grants; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.grants ENABLE ROW LEVEL SECURITY;

--
-- Name: idempotent_writes; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.idempotent_writes ENABLE ROW LEVEL SECURITY;

--
-- Name: orgs member_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY member_read ON data.orgs FOR SELECT USING ((org_id = ( SELECT data.acl_org() AS acl_org)));


--
-- Name: personas member_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY member_read ON data.personas FOR SELECT USING ((org_id = ( SELECT data.acl_org() AS acl_org)));


--
-- Name: repos member_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY member_read ON data.repos FOR SELECT USING ((org_id = ( SELECT data.acl_org() AS acl_org)));


--
-- Name: model_replays; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.model_replays ENABLE ROW LEVEL SECURITY;

--
-- Name: binding_keys no_direct_access; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY no_direct_access ON data.binding_keys USING (false);


--
-- Name: fragment_returns no_direct_access; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY no_direct_access ON data.fragment_returns USING (false);


--
-- Name: idempotent_writes no_direct_access; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY no_direct_access ON data.idempotent_writes USING (false);


--
-- Name: org_webhooks no_direct_access; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY no_direct_access ON data.org_webhooks USING (false);


--
-- Name: principal_bindings no_direct_access; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY no_direct_access ON data.principal_bindings USING (false);


--
-- Name: nudge_deliveries; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.nudge_deliveries ENABLE ROW LEVEL SECURITY;

--
-- Name: nudge_outbox; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.nudge_outbox ENABLE ROW LEVEL SECURITY;

--
-- Name: model_replays org_admin_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY org_admin_read ON data.model_replays FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ( SELECT data.acl_org_wide() AS acl_org_wide)));


--
-- Name: org_webhooks; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.org_webhooks ENABLE ROW LEVEL SECURITY;

--
-- Name: nudge_deliveries org_wide_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY org_wide_read ON data.nudge_deliveries FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ( SELECT data.acl_org_wide() AS acl_org_wide)));


--
-- Name: nudge_outbox org_wide_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY org_wide_read ON data.nudge_outbox FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ( SELECT data.acl_org_wide() AS acl_org_wide)));


--
-- Name: owner_reassignments org_wide_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY org_wide_read ON data.owner_reassignments FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ( SELECT data.acl_org_wide() AS acl_org_wide)));


--
-- Name: orgs; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.orgs ENABLE ROW LEVEL SECURITY;

--
-- Name: eval_replays own_only; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY own_only ON data.eval_replays FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (principal_id = ( SELECT data.acl_principal() AS acl_principal))));


--
-- Name: retrieval_traces own_only; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY own_only ON data.retrieval_traces FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (principal_id = ( SELECT data.acl_principal() AS acl_principal))));


--
-- Name: owner_reassignments; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.owner_reassignments ENABLE ROW LEVEL SECURITY;

--
-- Name: context_subscriptions party_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY party_read ON data.context_subscriptions FOR SELECT USING ((((org_id = ( SELECT data.acl_org() AS acl_org)) AND (context_id IN ( SELECT c.context_id
   FROM data.contexts c
  WHERE ((c.org_id = ( SELECT data.acl_org() AS acl_org)) AND ((c.repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (c.repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((c.persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (c.persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((c.session_id IS NULL) OR (c.session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[]))))))) OR ((subscriber_org_id = ( SELECT data.acl_org() AS acl_org)) AND ((subscriber_repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (subscriber_repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))))));


--
-- Name: persona_vectors; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.persona_vectors ENABLE ROW LEVEL SECURITY;

--
-- Name: personas; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.personas ENABLE ROW LEVEL SECURITY;

--
-- Name: pins; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.pins ENABLE ROW LEVEL SECURITY;

--
-- Name: principal_bindings; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.principal_bindings ENABLE ROW LEVEL SECURITY;

--
-- Name: principals; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.principals ENABLE ROW LEVEL SECURITY;

--
-- Name: ranking_profiles; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.ranking_profiles ENABLE ROW LEVEL SECURITY;

--
-- Name: repos; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.repos ENABLE ROW LEVEL SECURITY;

--
-- Name: retrieval_traces; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.retrieval_traces ENABLE ROW LEVEL SECURITY;

--
-- Name: bm25_corpus scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.bm25_corpus FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((session_id IS NULL) OR (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[])))));


--
-- Name: bm25_postings scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.bm25_postings FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((session_id IS NULL) OR (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[])))));


--
-- Name: bm25_terms scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.bm25_terms FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((session_id IS NULL) OR (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[])))));


--
-- Name: context_rules scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.context_rules FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[])))));


--
-- Name: contexts scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.contexts FOR SELECT USING ((((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((session_id IS NULL) OR (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[])))) OR (context_id IN ( SELECT r.context_id
   FROM data._readable_context_versions() r(context_id, version, via_subscription)))));


--
-- Name: document_versions scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.document_versions FOR SELECT USING ((doc_id IN ( SELECT d.doc_id
   FROM data.documents d)));


--
-- Name: documents scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.documents FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((session_id IS NULL) OR (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[])))));


--
-- Name: embeddings scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.embeddings FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((session_id IS NULL) OR (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[])))));


--
-- Name: fragment_links scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.fragment_links FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((session_id IS NULL) OR (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[]))) AND ((target_repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (target_repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((target_persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (target_persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((target_session_id IS NULL) OR (target_session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[])))));


--
-- Name: fragment_sources scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.fragment_sources FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (doc_id IN ( SELECT d.doc_id
   FROM data.documents d))));


--
-- Name: fragments scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.fragments FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((session_id IS NULL) OR (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[])))));


--
-- Name: git_syncs scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.git_syncs FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[])))));


--
-- Name: persona_vectors scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.persona_vectors FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[])))));


--
-- Name: pins scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.pins FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((session_id IS NULL) OR (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[])))));


--
-- Name: ranking_profiles scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.ranking_profiles FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[])))));


--
-- Name: api_keys self_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY self_read ON data.api_keys FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (principal_id = ( SELECT data.acl_principal() AS acl_principal))));


--
-- Name: grants self_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY self_read ON data.grants FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (principal_id = ( SELECT data.acl_principal() AS acl_principal))));


--
-- Name: principals self_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY self_read ON data.principals FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (principal_id = ( SELECT data.acl_principal() AS acl_principal))));


--
-- Name: sessions; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.sessions ENABLE ROW LEVEL SECURITY;

--
-- Name: context_members version_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY version_read ON data.context_members FOR SELECT USING (((context_id, version) IN ( SELECT r.context_id,
    r.version
   FROM data._readable_context_versions() r(context_id, version, via_subscription))));


--
-- Name: context_versions version_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY version_read ON data.context_versions FOR SELECT USING (((context_id, version) IN ( SELECT r.context_id,
    r.version
   FROM data._readable_context_versions() r(context_id, version, via_subscription))));


--
-- Name: SCHEMA api; Type: ACL; Schema: -; Owner: <migrator>
--

GRANT USAGE ON SCHEMA api TO contexts_service;
GRANT USAGE ON SCHEMA api TO contexts_analyst;
GRANT USAGE ON SCHEMA api TO contexts_auditor;


--
-- Name: SCHEMA data; Type: ACL; Schema: -; Owner: <migrator>
--

GRANT USAGE ON SCHEMA data TO contexts_service;
GRANT USAGE ON SCHEMA data TO contexts_analyst;
GRANT USAGE ON SCHEMA data TO contexts_auditor;


--
-- Name: SCHEMA extensions; Type: ACL; Schema: -; Owner: <migrator>
--

GRANT USAGE ON SCHEMA extensions TO contexts_service;
GRANT USAGE ON SCHEMA extensions TO contexts_analyst;
GRANT USAGE ON SCHEMA extensions TO contexts_auditor;


--
-- Name: FUNCTION active_model(p_namespace text, p_name text, p_dims integer); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.active_model(p_namespace text, p_name text, p_dims integer) FROM PUBLIC;
GRANT ALL ON FUNCTION api.active_model(p_namespace text, p_name text, p_dims integer) TO contexts_service;


--
-- Name: FUNCTION add_fragments(p_doc_id bigint, p_doc_version integer, p_chunks jsonb); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.add_fragments(p_doc_id bigint, p_doc_version integer, p_chunks jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION api.add_fragments(p_doc_id bigint, p_doc_version integer, p_chunks jsonb) TO contexts_service;


--
-- Name: FUNCTION add_model_vectors(p_model_id integer, p_fragment_ids bigint[], p_vectors jsonb); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.add_model_vectors(p_model_id integer, p_fragment_ids bigint[], p_vectors jsonb) FROM PUBLIC;


--
-- Name: FUNCTION add_persona_vector(p_model_id integer, p_org_id text, p_persona_id text, p_description text, p_updated_by text, p_vector jsonb); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.add_persona_vector(p_model_id integer, p_org_id text, p_persona_id text, p_description text, p_updated_by text, p_vector jsonb) FROM PUBLIC;


--
-- Name: FUNCTION authenticate(p_token text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.authenticate(p_token text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.authenticate(p_token text) TO contexts_service;
GRANT ALL ON FUNCTION api.authenticate(p_token text) TO contexts_analyst;
GRANT ALL ON FUNCTION api.authenticate(p_token text) TO contexts_auditor;


--
-- Name: FUNCTION authorize_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.authorize_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.authorize_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_service;


--
-- Name: FUNCTION begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text, p_author text, p_source_ts timestamp with time zone, p_metadata jsonb, p_owner text, p_owner_source text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text, p_author text, p_source_ts timestamp with time zone, p_metadata jsonb, p_owner text, p_owner_source text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text, p_author text, p_source_ts timestamp with time zone, p_metadata jsonb, p_owner text, p_owner_source text) TO contexts_service;


--
-- Name: FUNCTION begin_model_upgrade(p_namespace text, p_name text, p_source text, p_dims integer, p_window_days integer); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.begin_model_upgrade(p_namespace text, p_name text, p_source text, p_dims integer, p_window_days integer) FROM PUBLIC;


--
-- Name: FUNCTION bind_principal(p_org_id text, p_principal_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.bind_principal(p_org_id text, p_principal_id text) FROM PUBLIC;


--
-- Name: FUNCTION codeowners_file(p_org_id text, p_repo_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.codeowners_file(p_org_id text, p_repo_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.codeowners_file(p_org_id text, p_repo_id text) TO contexts_service;
GRANT ALL ON FUNCTION api.codeowners_file(p_org_id text, p_repo_id text) TO contexts_analyst;


--
-- Name: FUNCTION context_add_version(p_context_id bigint, p_fragment_ids bigint[], p_doc_ids bigint[], p_path_globs text[], p_note text, p_built_from jsonb, p_query_fragment_ids bigint[]); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.context_add_version(p_context_id bigint, p_fragment_ids bigint[], p_doc_ids bigint[], p_path_globs text[], p_note text, p_built_from jsonb, p_query_fragment_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.context_add_version(p_context_id bigint, p_fragment_ids bigint[], p_doc_ids bigint[], p_path_globs text[], p_note text, p_built_from jsonb, p_query_fragment_ids bigint[]) TO contexts_service;


--
-- Name: FUNCTION context_candidates(p_org_id text, p_refs text[], p_query text, p_query_embeddings jsonb, p_fusion jsonb, p_rrf_k integer, p_include_retired boolean, p_repo_id text, p_persona_id text, p_session_id text, p_scoped boolean); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.context_candidates(p_org_id text, p_refs text[], p_query text, p_query_embeddings jsonb, p_fusion jsonb, p_rrf_k integer, p_include_retired boolean, p_repo_id text, p_persona_id text, p_session_id text, p_scoped boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.context_candidates(p_org_id text, p_refs text[], p_query text, p_query_embeddings jsonb, p_fusion jsonb, p_rrf_k integer, p_include_retired boolean, p_repo_id text, p_persona_id text, p_session_id text, p_scoped boolean) TO contexts_service;


--
-- Name: FUNCTION context_create(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_name text, p_description text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.context_create(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_name text, p_description text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.context_create(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_name text, p_description text) TO contexts_service;


--
-- Name: FUNCTION context_get(p_context_id bigint); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.context_get(p_context_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION api.context_get(p_context_id bigint) TO contexts_service;
GRANT ALL ON FUNCTION api.context_get(p_context_id bigint) TO contexts_analyst;


--
-- Name: FUNCTION context_resolve(p_refs text[]); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.context_resolve(p_refs text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.context_resolve(p_refs text[]) TO contexts_service;
GRANT ALL ON FUNCTION api.context_resolve(p_refs text[]) TO contexts_analyst;


--
-- Name: FUNCTION context_retire(p_context_id bigint); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.context_retire(p_context_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION api.context_retire(p_context_id bigint) TO contexts_service;


--
-- Name: FUNCTION context_subscribe(p_context_id bigint, p_subscriber_org_id text, p_subscriber_repo_id text, p_version integer); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.context_subscribe(p_context_id bigint, p_subscriber_org_id text, p_subscriber_repo_id text, p_version integer) FROM PUBLIC;
GRANT ALL ON FUNCTION api.context_subscribe(p_context_id bigint, p_subscriber_org_id text, p_subscriber_repo_id text, p_version integer) TO contexts_service;


--
-- Name: FUNCTION context_subscriptions(p_context_id bigint, p_include_revoked boolean); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.context_subscriptions(p_context_id bigint, p_include_revoked boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.context_subscriptions(p_context_id bigint, p_include_revoked boolean) TO contexts_service;
GRANT ALL ON FUNCTION api.context_subscriptions(p_context_id bigint, p_include_revoked boolean) TO contexts_analyst;


--
-- Name: FUNCTION context_unsubscribe(p_subscription_id bigint); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.context_unsubscribe(p_subscription_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION api.context_unsubscribe(p_subscription_id bigint) TO contexts_service;


--
-- Name: FUNCTION context_versions(p_context_id bigint); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.context_versions(p_context_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION api.context_versions(p_context_id bigint) TO contexts_service;
GRANT ALL ON FUNCTION api.context_versions(p_context_id bigint) TO contexts_analyst;


--
-- Name: FUNCTION contexts_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_retired boolean); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.contexts_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_retired boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.contexts_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_retired boolean) TO contexts_service;
GRANT ALL ON FUNCTION api.contexts_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_retired boolean) TO contexts_analyst;


--
-- Name: FUNCTION create_analyst(p_org_id text, p_principal_id text, p_login text, p_verifier text, p_grants text[], p_display_name text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.create_analyst(p_org_id text, p_principal_id text, p_login text, p_verifier text, p_grants text[], p_display_name text) FROM PUBLIC;


--
-- Name: FUNCTION create_api_key(p_org_id text, p_principal_id text, p_key_id text, p_key_hash bytea, p_label text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.create_api_key(p_org_id text, p_principal_id text, p_key_id text, p_key_hash bytea, p_label text) FROM PUBLIC;


--
-- Name: FUNCTION create_login(p_login text, p_verifier text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.create_login(p_login text, p_verifier text) FROM PUBLIC;


--
-- Name: FUNCTION create_org(p_org_id text, p_display_name text, p_session_ttl interval); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.create_org(p_org_id text, p_display_name text, p_session_ttl interval) FROM PUBLIC;


--
-- Name: FUNCTION create_principal(p_org_id text, p_principal_id text, p_kind text, p_display_name text, p_db_role name); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.create_principal(p_org_id text, p_principal_id text, p_kind text, p_display_name text, p_db_role name) FROM PUBLIC;


--
-- Name: FUNCTION delete_document(p_doc_id bigint); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.delete_document(p_doc_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION api.delete_document(p_doc_id bigint) TO contexts_service;


--
-- Name: FUNCTION disable_principal(p_org_id text, p_principal_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.disable_principal(p_org_id text, p_principal_id text) FROM PUBLIC;


--
-- Name: FUNCTION drop_model_generation(p_model_id integer, p_force boolean); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.drop_model_generation(p_model_id integer, p_force boolean) FROM PUBLIC;


--
-- Name: FUNCTION drop_retired_models(); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.drop_retired_models() FROM PUBLIC;


--
-- Name: FUNCTION ensure_scope(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.ensure_scope(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) FROM PUBLIC;


--
-- Name: FUNCTION fragment_links(p_fragment_id bigint); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.fragment_links(p_fragment_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION api.fragment_links(p_fragment_id bigint) TO contexts_service;
GRANT ALL ON FUNCTION api.fragment_links(p_fragment_id bigint) TO contexts_analyst;


--
-- Name: FUNCTION get_document(p_doc_id bigint, p_version integer, p_offset integer, p_max_chars integer); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.get_document(p_doc_id bigint, p_version integer, p_offset integer, p_max_chars integer) FROM PUBLIC;
GRANT ALL ON FUNCTION api.get_document(p_doc_id bigint, p_version integer, p_offset integer, p_max_chars integer) TO contexts_service;
GRANT ALL ON FUNCTION api.get_document(p_doc_id bigint, p_version integer, p_offset integer, p_max_chars integer) TO contexts_analyst;


--
-- Name: FUNCTION get_fragment(p_fragment_id bigint); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.get_fragment(p_fragment_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION api.get_fragment(p_fragment_id bigint) TO contexts_service;
GRANT ALL ON FUNCTION api.get_fragment(p_fragment_id bigint) TO contexts_analyst;


--
-- Name: FUNCTION get_trace(p_trace_id uuid); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.get_trace(p_trace_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION api.get_trace(p_trace_id uuid) TO contexts_service;
GRANT ALL ON FUNCTION api.get_trace(p_trace_id uuid) TO contexts_analyst;
GRANT ALL ON FUNCTION api.get_trace(p_trace_id uuid) TO contexts_auditor;


--
-- Name: FUNCTION grant_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text, p_can_write boolean); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.grant_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text, p_can_write boolean) FROM PUBLIC;


--
-- Name: FUNCTION idempotent_record(p_key text, p_request_hash text, p_status integer, p_response jsonb); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.idempotent_record(p_key text, p_request_hash text, p_status integer, p_response jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION api.idempotent_record(p_key text, p_request_hash text, p_status integer, p_response jsonb) TO contexts_service;


--
-- Name: FUNCTION idempotent_response(p_key text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.idempotent_response(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.idempotent_response(p_key text) TO contexts_service;


--
-- Name: FUNCTION lexical_document(p_heading text, p_body text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.lexical_document(p_heading text, p_body text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.lexical_document(p_heading text, p_body text) TO contexts_service;
GRANT ALL ON FUNCTION api.lexical_document(p_heading text, p_body text) TO contexts_analyst;


--
-- Name: FUNCTION lexical_tsvector(p_text text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.lexical_tsvector(p_text text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.lexical_tsvector(p_text text) TO contexts_service;
GRANT ALL ON FUNCTION api.lexical_tsvector(p_text text) TO contexts_analyst;


--
-- Name: FUNCTION linked_fragments(p_org_id text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_as_of timestamp with time zone, p_include_superseded boolean); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.linked_fragments(p_org_id text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_as_of timestamp with time zone, p_include_superseded boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.linked_fragments(p_org_id text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_as_of timestamp with time zone, p_include_superseded boolean) TO contexts_service;
GRANT ALL ON FUNCTION api.linked_fragments(p_org_id text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_as_of timestamp with time zone, p_include_superseded boolean) TO contexts_analyst;


--
-- Name: FUNCTION list_analysts(p_org_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.list_analysts(p_org_id text) FROM PUBLIC;


--
-- Name: FUNCTION list_api_keys(p_org_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.list_api_keys(p_org_id text) FROM PUBLIC;


--
-- Name: FUNCTION list_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path_prefix text, p_limit integer, p_after bigint, p_kind text, p_owner text, p_updated_since timestamp with time zone); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.list_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path_prefix text, p_limit integer, p_after bigint, p_kind text, p_owner text, p_updated_since timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION api.list_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path_prefix text, p_limit integer, p_after bigint, p_kind text, p_owner text, p_updated_since timestamp with time zone) TO contexts_service;
GRANT ALL ON FUNCTION api.list_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path_prefix text, p_limit integer, p_after bigint, p_kind text, p_owner text, p_updated_since timestamp with time zone) TO contexts_analyst;


--
-- Name: FUNCTION list_grants(p_org_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.list_grants(p_org_id text) FROM PUBLIC;


--
-- Name: FUNCTION match_fragments(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespaces text[], p_content_hashes text[], p_simhashes bigint[]); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.match_fragments(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespaces text[], p_content_hashes text[], p_simhashes bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.match_fragments(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespaces text[], p_content_hashes text[], p_simhashes bigint[]) TO contexts_service;


--
-- Name: FUNCTION metrics_org_sizes(); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.metrics_org_sizes() FROM PUBLIC;
GRANT ALL ON FUNCTION api.metrics_org_sizes() TO contexts_service;


--
-- Name: FUNCTION model_backlog(p_model_id integer, p_after bigint, p_limit integer); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.model_backlog(p_model_id integer, p_after bigint, p_limit integer) FROM PUBLIC;


--
-- Name: FUNCTION model_generations(); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.model_generations() FROM PUBLIC;
GRANT ALL ON FUNCTION api.model_generations() TO contexts_service;
GRANT ALL ON FUNCTION api.model_generations() TO contexts_analyst;


--
-- Name: FUNCTION nudge_attempted(p_nudge_id bigint, p_url text, p_status integer, p_error text, p_duration_ms double precision, p_retry_in interval); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.nudge_attempted(p_nudge_id bigint, p_url text, p_status integer, p_error text, p_duration_ms double precision, p_retry_in interval) FROM PUBLIC;
GRANT ALL ON FUNCTION api.nudge_attempted(p_nudge_id bigint, p_url text, p_status integer, p_error text, p_duration_ms double precision, p_retry_in interval) TO contexts_service;


--
-- Name: FUNCTION nudge_claim(p_org_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.nudge_claim(p_org_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.nudge_claim(p_org_id text) TO contexts_service;


--
-- Name: FUNCTION nudges_enqueue(p_org_id text, p_as_of timestamp with time zone); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.nudges_enqueue(p_org_id text, p_as_of timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION api.nudges_enqueue(p_org_id text, p_as_of timestamp with time zone) TO contexts_service;


--
-- Name: FUNCTION open_session(p_session_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.open_session(p_session_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.open_session(p_session_id text) TO contexts_service;


--
-- Name: FUNCTION owner_settings(p_org_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.owner_settings(p_org_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.owner_settings(p_org_id text) TO contexts_service;
GRANT ALL ON FUNCTION api.owner_settings(p_org_id text) TO contexts_analyst;


--
-- Name: FUNCTION owner_settings_set(p_org_id text, p_default_owner text, p_stale_after_days integer, p_window_days integer, p_min_retrievals integer, p_nudge_period_hours integer); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.owner_settings_set(p_org_id text, p_default_owner text, p_stale_after_days integer, p_window_days integer, p_min_retrievals integer, p_nudge_period_hours integer) FROM PUBLIC;
GRANT ALL ON FUNCTION api.owner_settings_set(p_org_id text, p_default_owner text, p_stale_after_days integer, p_window_days integer, p_min_retrievals integer, p_nudge_period_hours integer) TO contexts_service;


--
-- Name: FUNCTION owners_reassign(p_org_id text, p_from text, p_to text, p_repo_id text, p_path_prefix text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.owners_reassign(p_org_id text, p_from text, p_to text, p_repo_id text, p_path_prefix text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.owners_reassign(p_org_id text, p_from text, p_to text, p_repo_id text, p_path_prefix text) TO contexts_service;


--
-- Name: FUNCTION owners_resolve(p_org_id text, p_repo_id text, p_doc_ids bigint[], p_owners text[]); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.owners_resolve(p_org_id text, p_repo_id text, p_doc_ids bigint[], p_owners text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.owners_resolve(p_org_id text, p_repo_id text, p_doc_ids bigint[], p_owners text[]) TO contexts_service;


--
-- Name: FUNCTION owners_unnamed(p_org_id text, p_repo_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.owners_unnamed(p_org_id text, p_repo_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.owners_unnamed(p_org_id text, p_repo_id text) TO contexts_service;


--
-- Name: FUNCTION persona_backlog(p_model_id integer); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.persona_backlog(p_model_id integer) FROM PUBLIC;


--
-- Name: FUNCTION persona_vectors_set(p_org_id text, p_persona_id text, p_description text, p_vectors jsonb); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.persona_vectors_set(p_org_id text, p_persona_id text, p_description text, p_vectors jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION api.persona_vectors_set(p_org_id text, p_persona_id text, p_description text, p_vectors jsonb) TO contexts_service;


--
-- Name: FUNCTION pin_add(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_id bigint, p_reason text, p_expires_at timestamp with time zone); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.pin_add(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_id bigint, p_reason text, p_expires_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION api.pin_add(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_id bigint, p_reason text, p_expires_at timestamp with time zone) TO contexts_service;


--
-- Name: FUNCTION pin_remove(p_pin_id bigint); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.pin_remove(p_pin_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION api.pin_remove(p_pin_id bigint) TO contexts_service;


--
-- Name: FUNCTION pins_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_expired boolean); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.pins_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_expired boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.pins_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_expired boolean) TO contexts_service;
GRANT ALL ON FUNCTION api.pins_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_expired boolean) TO contexts_analyst;


--
-- Name: FUNCTION policy_bypass(); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.policy_bypass() FROM PUBLIC;


--
-- Name: FUNCTION policy_report(); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.policy_report() FROM PUBLIC;


--
-- Name: FUNCTION promote_model(p_namespace text, p_generation integer); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.promote_model(p_namespace text, p_generation integer) FROM PUBLIC;


--
-- Name: FUNCTION purge_expired_sessions(); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.purge_expired_sessions() FROM PUBLIC;


--
-- Name: FUNCTION ranking_profile(p_org_id text, p_persona_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.ranking_profile(p_org_id text, p_persona_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.ranking_profile(p_org_id text, p_persona_id text) TO contexts_service;
GRANT ALL ON FUNCTION api.ranking_profile(p_org_id text, p_persona_id text) TO contexts_analyst;


--
-- Name: FUNCTION ranking_profile_delete(p_org_id text, p_persona_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.ranking_profile_delete(p_org_id text, p_persona_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.ranking_profile_delete(p_org_id text, p_persona_id text) TO contexts_service;


--
-- Name: FUNCTION ranking_profile_set(p_org_id text, p_persona_id text, p_w_rerank double precision, p_w_freshness double precision, p_w_authority double precision, p_w_pinned double precision, p_w_persona double precision, p_halflife_days jsonb, p_description text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.ranking_profile_set(p_org_id text, p_persona_id text, p_w_rerank double precision, p_w_freshness double precision, p_w_authority double precision, p_w_pinned double precision, p_w_persona double precision, p_halflife_days jsonb, p_description text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.ranking_profile_set(p_org_id text, p_persona_id text, p_w_rerank double precision, p_w_freshness double precision, p_w_authority double precision, p_w_pinned double precision, p_w_persona double precision, p_halflife_days jsonb, p_description text) TO contexts_service;


--
-- Name: FUNCTION ranking_profiles(p_org_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.ranking_profiles(p_org_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.ranking_profiles(p_org_id text) TO contexts_service;
GRANT ALL ON FUNCTION api.ranking_profiles(p_org_id text) TO contexts_analyst;


--
-- Name: FUNCTION reading_backlog(p_prefix bytea, p_after bigint, p_limit integer); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.reading_backlog(p_prefix bytea, p_after bigint, p_limit integer) FROM PUBLIC;


--
-- Name: FUNCTION reading_backlog_size(p_prefix bytea); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.reading_backlog_size(p_prefix bytea) FROM PUBLIC;


--
-- Name: FUNCTION record_eval_run(p_command text, p_pipeline jsonb, p_options jsonb, p_started_at timestamp with time zone, p_contexts_version text, p_figures jsonb, p_replays jsonb, p_outcome text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.record_eval_run(p_command text, p_pipeline jsonb, p_options jsonb, p_started_at timestamp with time zone, p_contexts_version text, p_figures jsonb, p_replays jsonb, p_outcome text) FROM PUBLIC;


--
-- Name: FUNCTION record_model_replay(p_model_id integer, p_trace_id uuid, p_overlap double precision, p_shared_top integer, p_top integer, p_same_order boolean, p_error text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.record_model_replay(p_model_id integer, p_trace_id uuid, p_overlap double precision, p_shared_top integer, p_top integer, p_same_order boolean, p_error text) FROM PUBLIC;


--
-- Name: FUNCTION record_trace(p_org_id text, p_query text, p_request jsonb, p_pipeline jsonb, p_candidates jsonb, p_duration_ms double precision, p_query_vectors jsonb); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.record_trace(p_org_id text, p_query text, p_request jsonb, p_pipeline jsonb, p_candidates jsonb, p_duration_ms double precision, p_query_vectors jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION api.record_trace(p_org_id text, p_query text, p_request jsonb, p_pipeline jsonb, p_candidates jsonb, p_duration_ms double precision, p_query_vectors jsonb) TO contexts_service;


--
-- Name: FUNCTION refresh_authority(); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.refresh_authority() FROM PUBLIC;
GRANT ALL ON FUNCTION api.refresh_authority() TO contexts_service;


--
-- Name: FUNCTION register_embedding_model(p_namespace text, p_name text, p_dims integer); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.register_embedding_model(p_namespace text, p_name text, p_dims integer) FROM PUBLIC;


--
-- Name: FUNCTION retrieve(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_fusion jsonb, p_as_of timestamp with time zone, p_include_superseded boolean); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.retrieve(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_fusion jsonb, p_as_of timestamp with time zone, p_include_superseded boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.retrieve(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_fusion jsonb, p_as_of timestamp with time zone, p_include_superseded boolean) TO contexts_analyst;


--
-- Name: FUNCTION retrieve_candidates(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_rrf_k integer, p_fusion jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_include_superseded boolean); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.retrieve_candidates(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_rrf_k integer, p_fusion jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_include_superseded boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.retrieve_candidates(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_rrf_k integer, p_fusion jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_include_superseded boolean) TO contexts_service;
GRANT ALL ON FUNCTION api.retrieve_candidates(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_rrf_k integer, p_fusion jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_include_superseded boolean) TO contexts_analyst;


--
-- Name: FUNCTION revoke_analyst(p_org_id text, p_principal_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.revoke_analyst(p_org_id text, p_principal_id text) FROM PUBLIC;


--
-- Name: FUNCTION revoke_api_key(p_key_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.revoke_api_key(p_key_id text) FROM PUBLIC;


--
-- Name: FUNCTION revoke_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.revoke_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text) FROM PUBLIC;


--
-- Name: FUNCTION rule_create(p_org_id text, p_repo_id text, p_name text, p_context_ref text, p_path_globs text[], p_symbol_globs text[], p_expires_at timestamp with time zone, p_enabled boolean); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.rule_create(p_org_id text, p_repo_id text, p_name text, p_context_ref text, p_path_globs text[], p_symbol_globs text[], p_expires_at timestamp with time zone, p_enabled boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.rule_create(p_org_id text, p_repo_id text, p_name text, p_context_ref text, p_path_globs text[], p_symbol_globs text[], p_expires_at timestamp with time zone, p_enabled boolean) TO contexts_service;


--
-- Name: FUNCTION rule_delete(p_rule_id bigint); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.rule_delete(p_rule_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION api.rule_delete(p_rule_id bigint) TO contexts_service;


--
-- Name: FUNCTION rule_matches(p_org_id text, p_repo_id text, p_touching text[]); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.rule_matches(p_org_id text, p_repo_id text, p_touching text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.rule_matches(p_org_id text, p_repo_id text, p_touching text[]) TO contexts_service;
GRANT ALL ON FUNCTION api.rule_matches(p_org_id text, p_repo_id text, p_touching text[]) TO contexts_analyst;


--
-- Name: FUNCTION rules_list(p_org_id text, p_repo_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.rules_list(p_org_id text, p_repo_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.rules_list(p_org_id text, p_repo_id text) TO contexts_service;
GRANT ALL ON FUNCTION api.rules_list(p_org_id text, p_repo_id text) TO contexts_analyst;


--
-- Name: FUNCTION score_dense(p_org_id text, p_query_embeddings jsonb, p_fragment_ids bigint[]); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.score_dense(p_org_id text, p_query_embeddings jsonb, p_fragment_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.score_dense(p_org_id text, p_query_embeddings jsonb, p_fragment_ids bigint[]) TO contexts_service;
GRANT ALL ON FUNCTION api.score_dense(p_org_id text, p_query_embeddings jsonb, p_fragment_ids bigint[]) TO contexts_analyst;


--
-- Name: FUNCTION score_lexical(p_org_id text, p_query text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.score_lexical(p_org_id text, p_query text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) FROM PUBLIC;
GRANT ALL ON FUNCTION api.score_lexical(p_org_id text, p_query text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) TO contexts_service;
GRANT ALL ON FUNCTION api.score_lexical(p_org_id text, p_query text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) TO contexts_analyst;


--
-- Name: FUNCTION search_dense(p_org_id text, p_query_embeddings jsonb, p_k integer, p_repo_id text, p_persona_id text, p_session_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.search_dense(p_org_id text, p_query_embeddings jsonb, p_k integer, p_repo_id text, p_persona_id text, p_session_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.search_dense(p_org_id text, p_query_embeddings jsonb, p_k integer, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_service;
GRANT ALL ON FUNCTION api.search_dense(p_org_id text, p_query_embeddings jsonb, p_k integer, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_analyst;


--
-- Name: FUNCTION search_lexical(p_org_id text, p_query text, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.search_lexical(p_org_id text, p_query text, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) FROM PUBLIC;
GRANT ALL ON FUNCTION api.search_lexical(p_org_id text, p_query text, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) TO contexts_service;
GRANT ALL ON FUNCTION api.search_lexical(p_org_id text, p_query text, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) TO contexts_analyst;


--
-- Name: FUNCTION secondary_models(); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.secondary_models() FROM PUBLIC;
GRANT ALL ON FUNCTION api.secondary_models() TO contexts_service;


--
-- Name: FUNCTION serving_models(); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.serving_models() FROM PUBLIC;
GRANT ALL ON FUNCTION api.serving_models() TO contexts_service;


--
-- Name: FUNCTION set_login_password(p_org_id text, p_principal_id text, p_verifier text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.set_login_password(p_org_id text, p_principal_id text, p_verifier text) FROM PUBLIC;


--
-- Name: FUNCTION set_readings(p_fragment_ids bigint[], p_org_ids text[], p_readings bytea[]); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.set_readings(p_fragment_ids bigint[], p_org_ids text[], p_readings bytea[]) FROM PUBLIC;


--
-- Name: FUNCTION stale_fragments(p_org_id text, p_owner text, p_min_retrievals integer, p_window_days integer, p_stale_after_days integer, p_as_of timestamp with time zone); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.stale_fragments(p_org_id text, p_owner text, p_min_retrievals integer, p_window_days integer, p_stale_after_days integer, p_as_of timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION api.stale_fragments(p_org_id text, p_owner text, p_min_retrievals integer, p_window_days integer, p_stale_after_days integer, p_as_of timestamp with time zone) TO contexts_service;
GRANT ALL ON FUNCTION api.stale_fragments(p_org_id text, p_owner text, p_min_retrievals integer, p_window_days integer, p_stale_after_days integer, p_as_of timestamp with time zone) TO contexts_analyst;


--
-- Name: FUNCTION sync_documents(p_org_id text, p_repo_id text, p_paths text[]); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.sync_documents(p_org_id text, p_repo_id text, p_paths text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.sync_documents(p_org_id text, p_repo_id text, p_paths text[]) TO contexts_service;
GRANT ALL ON FUNCTION api.sync_documents(p_org_id text, p_repo_id text, p_paths text[]) TO contexts_analyst;


--
-- Name: FUNCTION sync_record(p_org_id text, p_repo_id text, p_commit_sha text, p_ref text, p_previous text, p_written integer, p_deleted integer, p_full_scan boolean); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.sync_record(p_org_id text, p_repo_id text, p_commit_sha text, p_ref text, p_previous text, p_written integer, p_deleted integer, p_full_scan boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.sync_record(p_org_id text, p_repo_id text, p_commit_sha text, p_ref text, p_previous text, p_written integer, p_deleted integer, p_full_scan boolean) TO contexts_service;


--
-- Name: FUNCTION sync_state(p_org_id text, p_repo_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.sync_state(p_org_id text, p_repo_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.sync_state(p_org_id text, p_repo_id text) TO contexts_service;
GRANT ALL ON FUNCTION api.sync_state(p_org_id text, p_repo_id text) TO contexts_analyst;


--
-- Name: FUNCTION unchanged_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_paths text[], p_hashes text[]); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.unchanged_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_paths text[], p_hashes text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.unchanged_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_paths text[], p_hashes text[]) TO contexts_service;


--
-- Name: FUNCTION version_metadata(p_doc_ids bigint[], p_versions integer[]); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.version_metadata(p_doc_ids bigint[], p_versions integer[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.version_metadata(p_doc_ids bigint[], p_versions integer[]) TO contexts_service;
GRANT ALL ON FUNCTION api.version_metadata(p_doc_ids bigint[], p_versions integer[]) TO contexts_analyst;


--
-- Name: FUNCTION webhook_delete(p_org_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.webhook_delete(p_org_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.webhook_delete(p_org_id text) TO contexts_service;


--
-- Name: FUNCTION webhook_get(p_org_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.webhook_get(p_org_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.webhook_get(p_org_id text) TO contexts_service;


--
-- Name: FUNCTION webhook_set(p_org_id text, p_url text, p_secret text, p_enabled boolean); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.webhook_set(p_org_id text, p_url text, p_secret text, p_enabled boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.webhook_set(p_org_id text, p_url text, p_secret text, p_enabled boolean) TO contexts_service;


--
-- Name: FUNCTION whoami(); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.whoami() FROM PUBLIC;
GRANT ALL ON FUNCTION api.whoami() TO contexts_service;
GRANT ALL ON FUNCTION api.whoami() TO contexts_analyst;
GRANT ALL ON FUNCTION api.whoami() TO contexts_auditor;


--
-- Name: FUNCTION _acl(p_kind text, p_write boolean); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._acl(p_kind text, p_write boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION data._acl(p_kind text, p_write boolean) TO contexts_service;
GRANT ALL ON FUNCTION data._acl(p_kind text, p_write boolean) TO contexts_analyst;
GRANT ALL ON FUNCTION data._acl(p_kind text, p_write boolean) TO contexts_auditor;


--
-- Name: FUNCTION _adopt_login(p_login text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._adopt_login(p_login text) FROM PUBLIC;


--
-- Name: FUNCTION _analyze_new_tenant(p_org_id text, p_min_rows integer); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._analyze_new_tenant(p_org_id text, p_min_rows integer) FROM PUBLIC;


--
-- Name: FUNCTION _authority(p_org_id text, p_fragment_ids bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._authority(p_org_id text, p_fragment_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION data._authority(p_org_id text, p_fragment_ids bigint[]) TO contexts_service;
GRANT ALL ON FUNCTION data._authority(p_org_id text, p_fragment_ids bigint[]) TO contexts_analyst;


--
-- Name: FUNCTION _bind(p_org_id text, p_principal_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._bind(p_org_id text, p_principal_id text) FROM PUBLIC;


--
-- Name: FUNCTION _bm25_index(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._bm25_index(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]) FROM PUBLIC;


--
-- Name: FUNCTION _bm25_kept(p_org_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._bm25_kept(p_org_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION data._bm25_kept(p_org_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) TO contexts_service;
GRANT ALL ON FUNCTION data._bm25_kept(p_org_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) TO contexts_analyst;


--
-- Name: FUNCTION _bm25_on_fragment_change(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._bm25_on_fragment_change() FROM PUBLIC;


--
-- Name: FUNCTION _bm25_scores(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k1 double precision, p_b double precision); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._bm25_scores(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k1 double precision, p_b double precision) FROM PUBLIC;
GRANT ALL ON FUNCTION data._bm25_scores(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k1 double precision, p_b double precision) TO contexts_service;
GRANT ALL ON FUNCTION data._bm25_scores(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k1 double precision, p_b double precision) TO contexts_analyst;


--
-- Name: FUNCTION _bm25_top(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k integer, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone, p_k1 double precision, p_b double precision, p_prune_from bigint); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._bm25_top(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k integer, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone, p_k1 double precision, p_b double precision, p_prune_from bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION data._bm25_top(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k integer, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone, p_k1 double precision, p_b double precision, p_prune_from bigint) TO contexts_service;
GRANT ALL ON FUNCTION data._bm25_top(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k integer, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone, p_k1 double precision, p_b double precision, p_prune_from bigint) TO contexts_analyst;


--
-- Name: FUNCTION _bm25_unindex(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._bm25_unindex(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]) FROM PUBLIC;


--
-- Name: FUNCTION _bypasses_rls(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._bypasses_rls() FROM PUBLIC;
GRANT ALL ON FUNCTION data._bypasses_rls() TO contexts_service;
GRANT ALL ON FUNCTION data._bypasses_rls() TO contexts_analyst;
GRANT ALL ON FUNCTION data._bypasses_rls() TO contexts_auditor;


--
-- Name: FUNCTION _check_fusion(p_fusion jsonb); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._check_fusion(p_fusion jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION data._check_fusion(p_fusion jsonb) TO contexts_service;
GRANT ALL ON FUNCTION data._check_fusion(p_fusion jsonb) TO contexts_analyst;


--
-- Name: FUNCTION _check_halflives(p_halflife_days jsonb); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._check_halflives(p_halflife_days jsonb) FROM PUBLIC;


--
-- Name: FUNCTION _check_reading(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._check_reading() FROM PUBLIC;


--
-- Name: FUNCTION _check_rule_globs(p_path_globs text[], p_symbol_globs text[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._check_rule_globs(p_path_globs text[], p_symbol_globs text[]) FROM PUBLIC;


--
-- Name: FUNCTION _check_subscription(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._check_subscription() FROM PUBLIC;


--
-- Name: FUNCTION _citation_pagerank(p_damping double precision, p_iterations integer); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._citation_pagerank(p_damping double precision, p_iterations integer) FROM PUBLIC;


--
-- Name: FUNCTION _clamp_unreadable_times(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._clamp_unreadable_times() FROM PUBLIC;


--
-- Name: FUNCTION _context_rows(p_ids bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._context_rows(p_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION data._context_rows(p_ids bigint[]) TO contexts_service;
GRANT ALL ON FUNCTION data._context_rows(p_ids bigint[]) TO contexts_analyst;


--
-- Name: FUNCTION _context_versions(p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._context_versions(p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._context_versions(p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_service;
GRANT ALL ON FUNCTION data._context_versions(p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_analyst;


--
-- Name: FUNCTION _create_tenant_partitions(p_org_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._create_tenant_partitions(p_org_id text) FROM PUBLIC;


--
-- Name: FUNCTION _deactivate_unsourced(p_fragment_ids bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._deactivate_unsourced(p_fragment_ids bigint[]) FROM PUBLIC;


--
-- Name: FUNCTION _dense_hits(p_org_id text, p_model_id integer, p_dims integer, p_query_vector extensions.vector, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._dense_hits(p_org_id text, p_model_id integer, p_dims integer, p_query_vector extensions.vector, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION data._dense_hits(p_org_id text, p_model_id integer, p_dims integer, p_query_vector extensions.vector, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) TO contexts_service;
GRANT ALL ON FUNCTION data._dense_hits(p_org_id text, p_model_id integer, p_dims integer, p_query_vector extensions.vector, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) TO contexts_analyst;


--
-- Name: FUNCTION _document_keys(p_path text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._document_keys(p_path text) FROM PUBLIC;


--
-- Name: FUNCTION _find_duplicate(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespace text, p_content_hash text, p_simhash bigint, p_max_distance integer); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._find_duplicate(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespace text, p_content_hash text, p_simhash bigint, p_max_distance integer) FROM PUBLIC;


--
-- Name: FUNCTION _fuse(p_ids bigint[], p_lexical_ranks integer[], p_lexical_scores double precision[], p_dense_ranks integer[], p_dense_scores double precision[], p_namespaces text[], p_models text[], p_lexical_on boolean, p_dense_on boolean, p_fusion jsonb, p_rrf_k integer); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._fuse(p_ids bigint[], p_lexical_ranks integer[], p_lexical_scores double precision[], p_dense_ranks integer[], p_dense_scores double precision[], p_namespaces text[], p_models text[], p_lexical_on boolean, p_dense_on boolean, p_fusion jsonb, p_rrf_k integer) FROM PUBLIC;
GRANT ALL ON FUNCTION data._fuse(p_ids bigint[], p_lexical_ranks integer[], p_lexical_scores double precision[], p_dense_ranks integer[], p_dense_scores double precision[], p_namespaces text[], p_models text[], p_lexical_on boolean, p_dense_on boolean, p_fusion jsonb, p_rrf_k integer) TO contexts_service;
GRANT ALL ON FUNCTION data._fuse(p_ids bigint[], p_lexical_ranks integer[], p_lexical_scores double precision[], p_dense_ranks integer[], p_dense_scores double precision[], p_namespaces text[], p_models text[], p_lexical_on boolean, p_dense_on boolean, p_fusion jsonb, p_rrf_k integer) TO contexts_analyst;


--
-- Name: FUNCTION _glob_regex(p_glob text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._glob_regex(p_glob text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._glob_regex(p_glob text) TO contexts_service;
GRANT ALL ON FUNCTION data._glob_regex(p_glob text) TO contexts_analyst;


--
-- Name: FUNCTION _grant_target(p_org_id text, p_scope_kind text, p_scope_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._grant_target(p_org_id text, p_scope_kind text, p_scope_id text) FROM PUBLIC;


--
-- Name: FUNCTION _in_scope(fragment_repo text, fragment_persona text, fragment_session text, want_repo text, want_persona text, want_session text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._in_scope(fragment_repo text, fragment_persona text, fragment_session text, want_repo text, want_persona text, want_session text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._in_scope(fragment_repo text, fragment_persona text, fragment_session text, want_repo text, want_persona text, want_session text) TO contexts_service;
GRANT ALL ON FUNCTION data._in_scope(fragment_repo text, fragment_persona text, fragment_session text, want_repo text, want_persona text, want_session text) TO contexts_analyst;
GRANT ALL ON FUNCTION data._in_scope(fragment_repo text, fragment_persona text, fragment_session text, want_repo text, want_persona text, want_session text) TO contexts_auditor;


--
-- Name: FUNCTION _json_number(p_value jsonb); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._json_number(p_value jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION data._json_number(p_value jsonb) TO contexts_analyst;
GRANT ALL ON FUNCTION data._json_number(p_value jsonb) TO contexts_auditor;


--
-- Name: FUNCTION _metadata_problem(p_metadata jsonb); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._metadata_problem(p_metadata jsonb) FROM PUBLIC;


--
-- Name: FUNCTION _metadata_time(p_value text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._metadata_time(p_value text) FROM PUBLIC;


--
-- Name: FUNCTION _on_sources_deleted(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._on_sources_deleted() FROM PUBLIC;


--
-- Name: FUNCTION _path_problem(p_path text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._path_problem(p_path text) FROM PUBLIC;


--
-- Name: FUNCTION _principal_or_raise(OUT org_id text, OUT principal_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._principal_or_raise(OUT org_id text, OUT principal_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._principal_or_raise(OUT org_id text, OUT principal_id text) TO contexts_service;
GRANT ALL ON FUNCTION data._principal_or_raise(OUT org_id text, OUT principal_id text) TO contexts_analyst;
GRANT ALL ON FUNCTION data._principal_or_raise(OUT org_id text, OUT principal_id text) TO contexts_auditor;


--
-- Name: FUNCTION _query_vectors(p_query_embeddings jsonb); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._query_vectors(p_query_embeddings jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION data._query_vectors(p_query_embeddings jsonb) TO contexts_service;
GRANT ALL ON FUNCTION data._query_vectors(p_query_embeddings jsonb) TO contexts_analyst;


--
-- Name: FUNCTION _ranking_profile(p_org_id text, p_persona_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._ranking_profile(p_org_id text, p_persona_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._ranking_profile(p_org_id text, p_persona_id text) TO contexts_service;
GRANT ALL ON FUNCTION data._ranking_profile(p_org_id text, p_persona_id text) TO contexts_analyst;


--
-- Name: FUNCTION _readable_context_versions(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._readable_context_versions() FROM PUBLIC;
GRANT ALL ON FUNCTION data._readable_context_versions() TO contexts_service;
GRANT ALL ON FUNCTION data._readable_context_versions() TO contexts_analyst;


--
-- Name: FUNCTION _readable_fragments(p_org_id text, p_ids bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._readable_fragments(p_org_id text, p_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION data._readable_fragments(p_org_id text, p_ids bigint[]) TO contexts_service;
GRANT ALL ON FUNCTION data._readable_fragments(p_org_id text, p_ids bigint[]) TO contexts_analyst;
GRANT ALL ON FUNCTION data._readable_fragments(p_org_id text, p_ids bigint[]) TO contexts_auditor;


--
-- Name: FUNCTION _readable_time(p_value timestamp with time zone, p_what text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._readable_time(p_value timestamp with time zone, p_what text) FROM PUBLIC;


--
-- Name: TABLE documents; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.documents TO contexts_service;
GRANT SELECT ON TABLE data.documents TO contexts_analyst;


--
-- Name: FUNCTION _record_links(p_doc data.documents, p_links jsonb); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._record_links(p_doc data.documents, p_links jsonb) FROM PUBLIC;


--
-- Name: FUNCTION _record_returns(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._record_returns() FROM PUBLIC;


--
-- Name: FUNCTION _redact_candidates(p_org_id text, p_candidates jsonb); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._redact_candidates(p_org_id text, p_candidates jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION data._redact_candidates(p_org_id text, p_candidates jsonb) TO contexts_service;
GRANT ALL ON FUNCTION data._redact_candidates(p_org_id text, p_candidates jsonb) TO contexts_analyst;
GRANT ALL ON FUNCTION data._redact_candidates(p_org_id text, p_candidates jsonb) TO contexts_auditor;


--
-- Name: FUNCTION _redact_request(p_org_id text, p_query text, p_request jsonb, p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[], OUT query text, OUT request jsonb, OUT redacted text[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._redact_request(p_org_id text, p_query text, p_request jsonb, p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[], OUT query text, OUT request jsonb, OUT redacted text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION data._redact_request(p_org_id text, p_query text, p_request jsonb, p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[], OUT query text, OUT request jsonb, OUT redacted text[]) TO contexts_service;
GRANT ALL ON FUNCTION data._redact_request(p_org_id text, p_query text, p_request jsonb, p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[], OUT query text, OUT request jsonb, OUT redacted text[]) TO contexts_analyst;
GRANT ALL ON FUNCTION data._redact_request(p_org_id text, p_query text, p_request jsonb, p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[], OUT query text, OUT request jsonb, OUT redacted text[]) TO contexts_auditor;


--
-- Name: FUNCTION _refresh_validity(p_org_id text, p_doc_ids bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._refresh_validity(p_org_id text, p_doc_ids bigint[]) FROM PUBLIC;


--
-- Name: FUNCTION _require_org(p_org_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._require_org(p_org_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._require_org(p_org_id text) TO contexts_service;
GRANT ALL ON FUNCTION data._require_org(p_org_id text) TO contexts_analyst;
GRANT ALL ON FUNCTION data._require_org(p_org_id text) TO contexts_auditor;


--
-- Name: FUNCTION _require_principal(p_org_id text, p_principal_id text, p_enabled boolean); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._require_principal(p_org_id text, p_principal_id text, p_enabled boolean) FROM PUBLIC;


--
-- Name: FUNCTION _require_read(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._require_read(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._require_read(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_service;
GRANT ALL ON FUNCTION data._require_read(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_analyst;
GRANT ALL ON FUNCTION data._require_read(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_auditor;


--
-- Name: FUNCTION _require_rls_login(p_login text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._require_rls_login(p_login text) FROM PUBLIC;


--
-- Name: FUNCTION _require_scope(p_org_id text, p_repo_id text, p_persona_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._require_scope(p_org_id text, p_repo_id text, p_persona_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._require_scope(p_org_id text, p_repo_id text, p_persona_id text) TO contexts_service;
GRANT ALL ON FUNCTION data._require_scope(p_org_id text, p_repo_id text, p_persona_id text) TO contexts_analyst;
GRANT ALL ON FUNCTION data._require_scope(p_org_id text, p_repo_id text, p_persona_id text) TO contexts_auditor;


--
-- Name: FUNCTION _require_scram(p_verifier text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._require_scram(p_verifier text) FROM PUBLIC;


--
-- Name: FUNCTION _require_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._require_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) FROM PUBLIC;


--
-- Name: FUNCTION _resolve_context_refs(p_refs text[], p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._resolve_context_refs(p_refs text[], p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._resolve_context_refs(p_refs text[], p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_service;
GRANT ALL ON FUNCTION data._resolve_context_refs(p_refs text[], p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_analyst;


--
-- Name: FUNCTION _resolve_links(p_link_ids bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._resolve_links(p_link_ids bigint[]) FROM PUBLIC;


--
-- Name: FUNCTION _resolve_owner(p_org_id text, p_owner text, p_source text, p_current_owner text, p_current_source text, OUT owner text, OUT owner_source text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._resolve_owner(p_org_id text, p_owner text, p_source text, p_current_owner text, p_current_source text, OUT owner text, OUT owner_source text) FROM PUBLIC;


--
-- Name: FUNCTION _retire_sources(p_doc_id bigint, p_keep_version integer); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._retire_sources(p_doc_id bigint, p_keep_version integer) FROM PUBLIC;


--
-- Name: FUNCTION _rule_rows(p_ids bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._rule_rows(p_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION data._rule_rows(p_ids bigint[]) TO contexts_service;
GRANT ALL ON FUNCTION data._rule_rows(p_ids bigint[]) TO contexts_analyst;


--
-- Name: FUNCTION _serving_models(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._serving_models() FROM PUBLIC;
GRANT ALL ON FUNCTION data._serving_models() TO contexts_service;
GRANT ALL ON FUNCTION data._serving_models() TO contexts_analyst;


--
-- Name: FUNCTION _stale_core(p_org_id text, p_as_of timestamp with time zone, p_window interval, p_min integer, p_after interval); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._stale_core(p_org_id text, p_as_of timestamp with time zone, p_window interval, p_min integer, p_after interval) FROM PUBLIC;


--
-- Name: FUNCTION _stale_readable(p_org_id text, p_as_of timestamp with time zone, p_window_days integer, p_min integer, p_after_days integer); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._stale_readable(p_org_id text, p_as_of timestamp with time zone, p_window_days integer, p_min integer, p_after_days integer) FROM PUBLIC;
GRANT ALL ON FUNCTION data._stale_readable(p_org_id text, p_as_of timestamp with time zone, p_window_days integer, p_min integer, p_after_days integer) TO contexts_service;
GRANT ALL ON FUNCTION data._stale_readable(p_org_id text, p_as_of timestamp with time zone, p_window_days integer, p_min integer, p_after_days integer) TO contexts_analyst;


--
-- Name: FUNCTION _standby_binding(p_binding text, OUT org_id text, OUT principal_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._standby_binding(p_binding text, OUT org_id text, OUT principal_id text) FROM PUBLIC;


--
-- Name: FUNCTION _standby_signature(p_org_id text, p_principal_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._standby_signature(p_org_id text, p_principal_id text) FROM PUBLIC;


--
-- Name: FUNCTION _valid_login(p_login text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._valid_login(p_login text) FROM PUBLIC;


--
-- Name: TABLE contexts; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.contexts TO contexts_service;
GRANT SELECT ON TABLE data.contexts TO contexts_analyst;


--
-- Name: FUNCTION _writable_context(p_context_id bigint, p_retired_ok boolean); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._writable_context(p_context_id bigint, p_retired_ok boolean) FROM PUBLIC;


--
-- Name: FUNCTION acl_audit(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data.acl_audit() FROM PUBLIC;
GRANT ALL ON FUNCTION data.acl_audit() TO contexts_service;
GRANT ALL ON FUNCTION data.acl_audit() TO contexts_analyst;
GRANT ALL ON FUNCTION data.acl_audit() TO contexts_auditor;


--
-- Name: FUNCTION acl_org(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data.acl_org() FROM PUBLIC;
GRANT ALL ON FUNCTION data.acl_org() TO contexts_service;
GRANT ALL ON FUNCTION data.acl_org() TO contexts_analyst;
GRANT ALL ON FUNCTION data.acl_org() TO contexts_auditor;


--
-- Name: FUNCTION acl_org_wide(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data.acl_org_wide() FROM PUBLIC;
GRANT ALL ON FUNCTION data.acl_org_wide() TO contexts_service;
GRANT ALL ON FUNCTION data.acl_org_wide() TO contexts_analyst;
GRANT ALL ON FUNCTION data.acl_org_wide() TO contexts_auditor;


--
-- Name: FUNCTION acl_personas(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data.acl_personas() FROM PUBLIC;
GRANT ALL ON FUNCTION data.acl_personas() TO contexts_service;
GRANT ALL ON FUNCTION data.acl_personas() TO contexts_analyst;
GRANT ALL ON FUNCTION data.acl_personas() TO contexts_auditor;


--
-- Name: FUNCTION acl_principal(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data.acl_principal() FROM PUBLIC;
GRANT ALL ON FUNCTION data.acl_principal() TO contexts_service;
GRANT ALL ON FUNCTION data.acl_principal() TO contexts_analyst;
GRANT ALL ON FUNCTION data.acl_principal() TO contexts_auditor;


--
-- Name: FUNCTION acl_repos(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data.acl_repos() FROM PUBLIC;
GRANT ALL ON FUNCTION data.acl_repos() TO contexts_service;
GRANT ALL ON FUNCTION data.acl_repos() TO contexts_analyst;
GRANT ALL ON FUNCTION data.acl_repos() TO contexts_auditor;


--
-- Name: FUNCTION acl_sessions(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data.acl_sessions() FROM PUBLIC;
GRANT ALL ON FUNCTION data.acl_sessions() TO contexts_service;
GRANT ALL ON FUNCTION data.acl_sessions() TO contexts_analyst;
GRANT ALL ON FUNCTION data.acl_sessions() TO contexts_auditor;


--
-- Name: FUNCTION current_principal(OUT org_id text, OUT principal_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data.current_principal(OUT org_id text, OUT principal_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION data.current_principal(OUT org_id text, OUT principal_id text) TO contexts_service;
GRANT ALL ON FUNCTION data.current_principal(OUT org_id text, OUT principal_id text) TO contexts_analyst;
GRANT ALL ON FUNCTION data.current_principal(OUT org_id text, OUT principal_id text) TO contexts_auditor;


--
-- Name: TABLE document_retrievals; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.document_retrievals TO contexts_analyst;


--
-- Name: TABLE document_version_counts; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.document_version_counts TO contexts_analyst;


--
-- Name: TABLE eval_figures; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.eval_figures TO contexts_service;
GRANT SELECT ON TABLE data.eval_figures TO contexts_analyst;


--
-- Name: TABLE eval_runs; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.eval_runs TO contexts_service;
GRANT SELECT ON TABLE data.eval_runs TO contexts_analyst;


--
-- Name: TABLE eval_figures; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.eval_figures TO contexts_analyst;
GRANT SELECT ON TABLE api.eval_figures TO contexts_auditor;


--
-- Name: TABLE eval_replay_diffs; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.eval_replay_diffs TO contexts_analyst;
GRANT SELECT ON TABLE api.eval_replay_diffs TO contexts_auditor;


--
-- Name: TABLE eval_runs; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.eval_runs TO contexts_analyst;
GRANT SELECT ON TABLE api.eval_runs TO contexts_auditor;


--
-- Name: TABLE retrieval_traces; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.retrieval_traces TO contexts_service;
GRANT SELECT ON TABLE api.retrieval_traces TO contexts_analyst;
GRANT SELECT ON TABLE api.retrieval_traces TO contexts_auditor;


--
-- Name: TABLE fragment_retrievals; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.fragment_retrievals TO contexts_analyst;
GRANT SELECT ON TABLE api.fragment_retrievals TO contexts_auditor;


--
-- Name: TABLE fragments; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.fragments TO contexts_service;
GRANT SELECT ON TABLE data.fragments TO contexts_analyst;


--
-- Name: TABLE fragments_by_owner; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.fragments_by_owner TO contexts_analyst;


--
-- Name: TABLE fragment_sources; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.fragment_sources TO contexts_service;
GRANT SELECT ON TABLE data.fragment_sources TO contexts_analyst;


--
-- Name: TABLE fragments_never_retrieved; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.fragments_never_retrieved TO contexts_analyst;


--
-- Name: TABLE near_duplicate_clusters; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.near_duplicate_clusters TO contexts_analyst;


--
-- Name: TABLE near_duplicate_pairs; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.near_duplicate_pairs TO contexts_analyst;


--
-- Name: TABLE query_vectors; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.query_vectors TO contexts_analyst;
GRANT SELECT ON TABLE api.query_vectors TO contexts_auditor;


--
-- Name: TABLE retrieval_summaries; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.retrieval_summaries TO contexts_analyst;
GRANT SELECT ON TABLE api.retrieval_summaries TO contexts_auditor;


--
-- Name: TABLE retrievals_below_floor; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.retrievals_below_floor TO contexts_analyst;
GRANT SELECT ON TABLE api.retrievals_below_floor TO contexts_auditor;


--
-- Name: TABLE retrievals_per_day; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.retrievals_per_day TO contexts_analyst;
GRANT SELECT ON TABLE api.retrievals_per_day TO contexts_auditor;


--
-- Name: COLUMN api_keys.key_id; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT(key_id) ON TABLE data.api_keys TO contexts_service;
GRANT SELECT(key_id) ON TABLE data.api_keys TO contexts_analyst;


--
-- Name: COLUMN api_keys.org_id; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT(org_id) ON TABLE data.api_keys TO contexts_service;
GRANT SELECT(org_id) ON TABLE data.api_keys TO contexts_analyst;


--
-- Name: COLUMN api_keys.principal_id; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT(principal_id) ON TABLE data.api_keys TO contexts_service;
GRANT SELECT(principal_id) ON TABLE data.api_keys TO contexts_analyst;


--
-- Name: COLUMN api_keys.label; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT(label) ON TABLE data.api_keys TO contexts_service;
GRANT SELECT(label) ON TABLE data.api_keys TO contexts_analyst;


--
-- Name: COLUMN api_keys.created_at; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT(created_at) ON TABLE data.api_keys TO contexts_service;
GRANT SELECT(created_at) ON TABLE data.api_keys TO contexts_analyst;


--
-- Name: COLUMN api_keys.last_used_at; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT(last_used_at) ON TABLE data.api_keys TO contexts_service;
GRANT SELECT(last_used_at) ON TABLE data.api_keys TO contexts_analyst;


--
-- Name: COLUMN api_keys.revoked_at; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT(revoked_at) ON TABLE data.api_keys TO contexts_service;
GRANT SELECT(revoked_at) ON TABLE data.api_keys TO contexts_analyst;


--
-- Name: TABLE authority_refreshes; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.authority_refreshes TO contexts_service;
GRANT SELECT ON TABLE data.authority_refreshes TO contexts_analyst;


--
-- Name: TABLE bm25_corpus; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.bm25_corpus TO contexts_service;
GRANT SELECT ON TABLE data.bm25_corpus TO contexts_analyst;


--
-- Name: TABLE bm25_postings; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.bm25_postings TO contexts_service;
GRANT SELECT ON TABLE data.bm25_postings TO contexts_analyst;


--
-- Name: TABLE bm25_terms; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.bm25_terms TO contexts_service;
GRANT SELECT ON TABLE data.bm25_terms TO contexts_analyst;


--
-- Name: TABLE context_members; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.context_members TO contexts_service;
GRANT SELECT ON TABLE data.context_members TO contexts_analyst;


--
-- Name: TABLE context_rules; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.context_rules TO contexts_service;
GRANT SELECT ON TABLE data.context_rules TO contexts_analyst;


--
-- Name: TABLE context_subscriptions; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.context_subscriptions TO contexts_service;
GRANT SELECT ON TABLE data.context_subscriptions TO contexts_analyst;


--
-- Name: TABLE context_versions; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.context_versions TO contexts_service;
GRANT SELECT ON TABLE data.context_versions TO contexts_analyst;


--
-- Name: TABLE document_versions; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.document_versions TO contexts_service;
GRANT SELECT ON TABLE data.document_versions TO contexts_analyst;


--
-- Name: TABLE embedding_models; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.embedding_models TO contexts_service;
GRANT SELECT ON TABLE data.embedding_models TO contexts_analyst;


--
-- Name: TABLE embedding_namespaces; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.embedding_namespaces TO contexts_service;
GRANT SELECT ON TABLE data.embedding_namespaces TO contexts_analyst;


--
-- Name: TABLE embeddings; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.embeddings TO contexts_service;
GRANT SELECT ON TABLE data.embeddings TO contexts_analyst;


--
-- Name: TABLE fragment_links; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.fragment_links TO contexts_service;
GRANT SELECT ON TABLE data.fragment_links TO contexts_analyst;


--
-- Name: TABLE git_syncs; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.git_syncs TO contexts_service;
GRANT SELECT ON TABLE data.git_syncs TO contexts_analyst;


--
-- Name: TABLE grants; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.grants TO contexts_service;
GRANT SELECT ON TABLE data.grants TO contexts_analyst;
GRANT SELECT ON TABLE data.grants TO contexts_auditor;


--
-- Name: TABLE idempotent_writes; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.idempotent_writes TO contexts_service;
GRANT SELECT ON TABLE data.idempotent_writes TO contexts_analyst;


--
-- Name: TABLE model_replays; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.model_replays TO contexts_service;
GRANT SELECT ON TABLE data.model_replays TO contexts_analyst;


--
-- Name: TABLE nudge_deliveries; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.nudge_deliveries TO contexts_service;
GRANT SELECT ON TABLE data.nudge_deliveries TO contexts_analyst;


--
-- Name: TABLE nudge_outbox; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.nudge_outbox TO contexts_service;
GRANT SELECT ON TABLE data.nudge_outbox TO contexts_analyst;


--
-- Name: TABLE orgs; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.orgs TO contexts_service;
GRANT SELECT ON TABLE data.orgs TO contexts_analyst;
GRANT SELECT ON TABLE data.orgs TO contexts_auditor;


--
-- Name: TABLE owner_reassignments; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.owner_reassignments TO contexts_service;
GRANT SELECT ON TABLE data.owner_reassignments TO contexts_analyst;


--
-- Name: TABLE persona_vectors; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.persona_vectors TO contexts_service;
GRANT SELECT ON TABLE data.persona_vectors TO contexts_analyst;


--
-- Name: TABLE personas; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.personas TO contexts_service;
GRANT SELECT ON TABLE data.personas TO contexts_analyst;


--
-- Name: TABLE pins; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.pins TO contexts_service;
GRANT SELECT ON TABLE data.pins TO contexts_analyst;


--
-- Name: TABLE principals; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.principals TO contexts_service;
GRANT SELECT ON TABLE data.principals TO contexts_analyst;
GRANT SELECT ON TABLE data.principals TO contexts_auditor;


--
-- Name: TABLE ranking_profiles; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.ranking_profiles TO contexts_service;
GRANT SELECT ON TABLE data.ranking_profiles TO contexts_analyst;


--
-- Name: TABLE repos; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.repos TO contexts_service;
GRANT SELECT ON TABLE data.repos TO contexts_analyst;


--
-- Name: TABLE sessions; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.sessions TO contexts_service;
GRANT SELECT ON TABLE data.sessions TO contexts_analyst;


--
-- PostgreSQL database dump complete
--

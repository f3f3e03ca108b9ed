-- Ingestion: document versions, near-duplicate resolution, fragment writes, models.

-- service.register_embedding_model: the active model of a namespace, created (with its
-- own HNSW index) on first use. A different model for a namespace that already has
-- one is an upgrade (`contexts models upgrade`, 31_model_generations.sql): refuse, and
-- say how.
create or replace function service.register_embedding_model(p_namespace text, p_name text, p_dims int)
returns int
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
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
comment on function service.register_embedding_model(text, text, int) is 'Active model of a namespace; first use creates it and its HNSW index.';

-- service.active_model: the id of a namespace's active model, which must be the one the
-- caller embeds with. The service looks models up; registering one (DDL, for every
-- tenant) is left to administrators: the service's start-up and the CLI do it as the
-- migrator.
create or replace function service.active_model(p_namespace text, p_name text, p_dims int)
returns int
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
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
comment on function service.active_model(text, text, int) is 'Id of the active model of a namespace, checked against the caller''s model.';

-- data._path_problem: why a document path may not be stored (null when it may). The
-- rule of app.ingest.normalize.normalize_path, for every door: a path as that function
-- returns it (NFC, relative, `/` between segments, no empty, `.`, blank or `..` segment,
-- at most 1,024 characters) with no character a reader of a citation cannot see or that
-- breaks its line (Unicode categories Cc, Cf, Zl and Zp, as of Unicode 14).
create or replace function data._path_problem(p_path text)
returns text
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
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
$$;
comment on function data._path_problem(text) is 'Why a document path may not be stored (null when it may): what app.ingest.normalize.normalize_path would change or refuse.';

-- data._metadata_problem: why a document's metadata may not be stored (null when it
-- may): a JSON object of at most 32 KiB as printed here, nested at most 32 levels deep
-- (a reader decodes it recursively), whose numbers a double holds (a reader decodes
-- them as doubles; beyond one it reads infinity, or fails on a long integer), and whose
-- `valid_from` / `valid_until`, when they are times, are times every reader can decode
-- (data._readable_time: they become the fragments' window). The HTTP API refuses more
-- before it gets here (16 KiB of compact JSON), app.readable the same depth.
create or replace function data._metadata_problem(p_metadata jsonb)
returns text
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
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
$$;
comment on function data._metadata_problem(jsonb) is 'Why a document''s metadata may not be stored (null when it may): not an object, over 32 KiB, nested over 32 levels, a number beyond a double, or a validity time no reader can decode.';

-- data._begin_scope: what a write into a scope checks and takes once, before its
-- documents: the bound principal's write grant on the scope, the scope's repo, persona
-- and session rows, and the org's write lock (writers of one org are serialised).
create or replace function data._begin_scope(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text)
returns void
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    perform data._require_write(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform service.ensure_scope(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform pg_advisory_xact_lock(hashtextextended('contexts.ingest:' || p_org_id, 0));
end
$$;

-- data._same_document: whether writing a document again changes nothing: the same text,
-- kind and metadata, and no named owner other than the stored one. Kind and metadata
-- decide what its fragments are (an anti-pattern, a validity window, a filter's
-- answer), so a change of either is a new version, as an edit is; so is an owner the
-- document now names. An owner an admin reassigned stays until the text changes
-- (data._resolve_owner), so re-sending the same text with its old owner keeps the
-- reassignment. Author and timestamp record where a version came from (a file's
-- modification time, whoever ran the ingestion) and make no version on their own:
-- re-ingesting a fresh clone or another person's checkout changes nothing. The keys a
-- git sync records (git_commit, git_blob, ...) are its own: a writer that sends none of
-- them (`contexts ingest` of a synced work tree) is compared without them, so the same
-- text stays the sync's document; a sync, which sends them, takes over what another
-- writer stored. A named owner is the same only when the document named it (an owner
-- CODEOWNERS or the org's default gave is made the document's own).
create or replace function data._same_document(
    p_hash text, p_kind text, p_metadata jsonb, p_owner text, p_owner_source text,
    p_stored_hash text, p_stored_kind text, p_stored_metadata jsonb, p_stored_owner text,
    p_stored_owner_source text)
returns boolean
language sql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
    select p_stored_hash = p_hash
       and p_stored_kind is not distinct from p_kind
       and coalesce(p_metadata, '{}') = case
               when jsonb_typeof(p_metadata) = 'object'
                    and exists (select 1 from jsonb_object_keys(p_metadata) k where starts_with(k, 'git_'))
               then p_stored_metadata
               else (select coalesce(jsonb_object_agg(e.key, e.value), '{}')
                     from jsonb_each(p_stored_metadata) e where not starts_with(e.key, 'git_'))
           end
       and (p_owner is null
            or coalesce(p_owner_source, 'document') <> 'document'
            or p_stored_owner_source = 'reassigned'
            or (p_stored_owner is not distinct from p_owner and p_stored_owner_source = 'document'))
$$;
comment on function data._same_document(text, text, jsonb, text, text, text, text, jsonb, text, text)
    is 'Whether a document written again changes nothing: the same text, kind and metadata, and no other named owner (a reassigned owner stays).';

-- data._begin_document: record a document's content. An unchanged document
-- (data._same_document) is a no-op; a changed one becomes a new version and retires the previous version's fragment
-- pointers (the old version's rows stay for history). Serialised per org so
-- near-duplicate resolution and BM25 statistics see a consistent state. `affected`:
-- the fragments whose pointers it retired, which the caller passes to
-- data._deactivate_unsourced (service.begin_document at once, service.begin_documents
-- once for all its documents: a fragment one document leaves without a live exact
-- source has its near-duplicate pointers detached by that document's retirement, so
-- no later document of the call retires a pointer of it, and deactivating it later
-- changes nothing the next document sees).
create or replace function data._begin_document(
    p_org_id text, p_repo_id text, p_persona_id text, p_session_id text,
    p_path text, p_kind text, p_content text, p_content_hash text,
    p_language text, p_author text, p_source_ts timestamptz, p_metadata jsonb, p_owner text,
    p_owner_source text, out doc_id bigint, out version int, out changed boolean, out rehome jsonb,
    out affected bigint[])
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    broken_constraint text;
    existing data.documents;
    current record;
    new_version int;
    named record;
    problem text;
    retired record;
begin
    -- The caller has checked the write grant on the scope, made the scope's rows and
    -- taken the org's write lock (data._begin_scope), once for all its documents.
    -- Only what every reader can decode is stored (app/readable.py says the same).
    problem := coalesce(data._path_problem(p_path), data._metadata_problem(coalesce(p_metadata, '{}')));
    if problem is not null then
        raise exception 'invalid document: %', problem using errcode = '22023';
    end if;
    perform data._readable_time(p_source_ts, 'the document''s timestamp');

    select d.* into existing from data.documents d
    where d.org_id = p_org_id
      and coalesce(d.repo_id, '') = coalesce(p_repo_id, '')
      and coalesce(d.persona_id, '') = coalesce(p_persona_id, '')
      and coalesce(d.session_id, '') = coalesce(p_session_id, '')
      and d.path = p_path
    for update;

    if found then
        select v.content_hash, v.metadata into current from data.document_versions v
        where v.doc_id = existing.doc_id and v.version = existing.current_version;
        -- A deleted document written again comes back as a new version, even unchanged,
        -- as does one a migration marked for re-chunking (rewrite_due, migration 0044).
        if data._same_document(p_content_hash, p_kind, p_metadata, p_owner, p_owner_source,
                               current.content_hash, existing.kind, current.metadata, existing.owner,
                               existing.owner_source)
           and existing.deleted_at is null and not existing.rewrite_due then
            doc_id := existing.doc_id;
            version := existing.current_version;
            changed := false;
            rehome := '[]'::jsonb;
            affected := '{}';
            return;
        end if;
        new_version := existing.current_version + 1;
        select * into named from data._resolve_owner(p_org_id, p_owner, p_owner_source,
                                                     existing.owner, existing.owner_source,
                                                     current.content_hash = p_content_hash);
        update data.documents d
        set current_version = new_version, kind = p_kind, owner = named.owner, owner_source = named.owner_source,
            updated_at = now(), deleted_at = null, deleted_by = null, rewrite_due = false
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

    insert into data.document_versions (org_id, doc_id, version, content_hash, content, language, author, source_ts,
                                        metadata)
    values (p_org_id, existing.doc_id, new_version, p_content_hash, p_content, p_language, p_author, p_source_ts,
            coalesce(p_metadata, '{}'));

    doc_id := existing.doc_id;
    version := new_version;
    changed := true;
    if new_version = 1 then
        -- A new document: no older version has pointers to retire.
        rehome := '[]'::jsonb;
        affected := '{}';
    else
        retired := data._retire_pointers(existing.doc_id, new_version);
        rehome := retired.detached;
        affected := retired.affected;
    end if;
exception when check_violation or not_null_violation then
    get stacked diagnostics broken_constraint = constraint_name;
    perform data._raise_invalid('invalid document', sqlerrm, broken_constraint);
end
$$;
comment on function data._begin_document(text, text, text, text, text, text, text, text, text, text, timestamptz, jsonb, text, text)
    is 'service.begin_document''s work after data._begin_scope, leaving the deactivation of the fragments whose pointers it retired (affected) to the caller.';

-- service.begin_document: record a document's content (data._begin_document), then
-- deactivate the fragments it left without a live exact source.
create or replace function service.begin_document(
    p_org_id text, p_repo_id text, p_persona_id text, p_session_id text,
    p_path text, p_kind text, p_content text, p_content_hash text,
    p_language text default null, p_author text default null,
    p_source_ts timestamptz default null, p_metadata jsonb default '{}', p_owner text default null,
    p_owner_source text default null)
returns table (doc_id bigint, version int, changed boolean, rehome jsonb)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    begun record;
begin
    perform data._begin_scope(p_org_id, p_repo_id, p_persona_id, p_session_id);
    begun := data._begin_document(p_org_id, p_repo_id, p_persona_id, p_session_id, p_path, p_kind, p_content,
                                  p_content_hash, p_language, p_author, p_source_ts, p_metadata, p_owner,
                                  p_owner_source);
    perform data._deactivate_unsourced(begun.affected);
    return query select begun.doc_id, begun.version, begun.changed, begun.rehome;
end
$$;
comment on function service.begin_document(text, text, text, text, text, text, text, text, text, text, timestamptz, jsonb, text, text)
    is 'Start ingesting a document (the bound principal needs write grants on its scope): no-op when unchanged (and not deleted), else a new version that retires the old pointers; returns near-duplicate pointers of other documents that must be re-homed (see data._retire_sources).';

-- service.begin_documents: service.begin_document for several documents of one scope,
-- in order, in one call (an ingestion group's): the same rows, with the fragments their
-- retirements leave without a live exact source deactivated in one statement (so BM25
-- removes them at once). `p_documents`: [{path, kind, content, content_hash, language,
-- author, timestamp, metadata, owner, owner_source, namespace, chunk_hashes}]; one row per
-- document, in order. `chunk_hashes` (optional, with `namespace`): the content hashes of
-- the chunks the caller will write for the new version with service.add_documents in the
-- same transaction. A retired fragment holding one of these texts is left active: the
-- chunk will point at it again, and deactivating it only for add_documents to revive it
-- took each unchanged chunk of an edited document out of BM25 and back (about a third of
-- re-ingesting edited files, measured). add_documents applies the rule to whatever of
-- them no chunk did point at.
create or replace function service.begin_documents(
    p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_documents jsonb)
returns table (path text, doc_id bigint, version int, changed boolean, rehome jsonb)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    d jsonb;
    begun record;
    affected bigint[] := '{}';
    paths text[] := '{}';
    doc_ids bigint[] := '{}';
    versions int[] := '{}';
    changes boolean[] := '{}';
    rehomes jsonb[] := '{}';
    kept_namespaces text[] := '{}';
    kept_hashes text[] := '{}';
begin
    if jsonb_typeof(p_documents) is distinct from 'array' then
        raise exception 'documents must be a JSON array' using errcode = '22023';
    end if;
    perform data._begin_scope(p_org_id, p_repo_id, p_persona_id, p_session_id);
    for d in select e.value from jsonb_array_elements(p_documents) e loop
        begun := data._begin_document(p_org_id, p_repo_id, p_persona_id, p_session_id, d->>'path', d->>'kind',
                                      d->>'content', d->>'content_hash', d->>'language', d->>'author',
                                      (d->>'timestamp')::timestamptz, coalesce(d->'metadata', '{}'), d->>'owner',
                                      d->>'owner_source');
        affected := affected || begun.affected;
        paths := paths || (d->>'path');
        doc_ids := doc_ids || begun.doc_id;
        versions := versions || begun.version;
        changes := changes || begun.changed;
        rehomes := rehomes || begun.rehome;
        if begun.changed and jsonb_typeof(d->'chunk_hashes') = 'array' then
            if jsonb_typeof(d->'namespace') is distinct from 'string' then
                raise exception 'chunk_hashes come with the namespace of their chunks' using errcode = '22023';
            end if;
            select kept_namespaces || array_agg(d->>'namespace'), kept_hashes || array_agg(h.value)
              into kept_namespaces, kept_hashes
            from jsonb_array_elements_text(d->'chunk_hashes') h;
        end if;
    end loop;
    perform data._deactivate_unsourced(array(
        select distinct a.id from unnest(affected) as a(id)
        where not exists (select 1 from data.fragments f
                          join unnest(kept_namespaces, kept_hashes) as k(namespace, content_hash)
                            on k.namespace = f.namespace and k.content_hash = f.content_hash
                          where f.org_id = p_org_id and f.fragment_id = a.id)));
    return query select b.path, b.doc_id, b.version, b.changed, b.rehome
                 from unnest(paths, doc_ids, versions, changes, rehomes) with ordinality as b(path, doc_id, version, changed, rehome, n)
                 order by b.n;
end
$$;
comment on function service.begin_documents(text, text, text, text, jsonb)
    is 'service.begin_document for several documents of one scope in one call (an ingestion group): the same rows, the retired fragments deactivated at once, except those holding a text of the documents'' chunk_hashes (service.add_documents, in the same transaction, applies the rule to them).';

-- service.unchanged_documents: which of these documents the scope holds already as the
-- current, live version at their path (data._same_document: the same text, kind,
-- metadata and named owner), not marked for re-chunking (data.documents.rewrite_due);
-- those need no chunking and no version (service.begin_document would answer
-- "unchanged" for each). `p_documents`: [{path, content_hash, kind, metadata, owner}].
-- The same write grants as service.begin_document are required, so a principal that
-- may not write learns nothing here. It takes no lock: a document another writer
-- changes meanwhile is seen as before, as if this ingestion had come first.
drop function if exists service.unchanged_documents(text, text, text, text, text[], text[]);
create or replace function service.unchanged_documents(
    p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_documents jsonb)
returns table (path text, doc_id bigint, version int)
language plpgsql stable security definer
set search_path = pg_catalog, pg_temp
as $$
begin
    perform data._require_write(p_org_id, p_repo_id, p_persona_id, p_session_id);
    if jsonb_typeof(p_documents) is distinct from 'array' then
        raise exception 'documents must be a JSON array' using errcode = '22023';
    end if;
    return query
    select d.path, d.doc_id, d.current_version
    from jsonb_array_elements(p_documents) as w(doc)
    join data.documents d
      on d.org_id = p_org_id
     and coalesce(d.repo_id, '') = coalesce(p_repo_id, '')
     and coalesce(d.persona_id, '') = coalesce(p_persona_id, '')
     and coalesce(d.session_id, '') = coalesce(p_session_id, '')
     and d.path = w.doc->>'path'
     and d.deleted_at is null
     and not d.rewrite_due
    join data.document_versions v
      on v.org_id = d.org_id and v.doc_id = d.doc_id and v.version = d.current_version
    where data._same_document(w.doc->>'content_hash', w.doc->>'kind', coalesce(w.doc->'metadata', '{}'),
                              w.doc->>'owner', 'document', v.content_hash, d.kind, v.metadata, d.owner,
                              d.owner_source);
end
$$;
comment on function service.unchanged_documents(text, text, text, text, jsonb)
    is 'Which of these documents ([{path, content_hash, kind, metadata, owner}]) the scope holds already as the current, live version with the same text, kind, metadata and named owner (write grants required): they need no new version.';

-- data._unsourced: the one rule for `active`: a fragment is retrievable only while a
-- live source holds exactly its text. Of these fragments, the active ones no live source
-- holds exactly (data._deactivate_unsourced deactivates them; service.add_documents
-- finds with it the ones service.begin_documents kept).
create or replace function data._unsourced(p_fragment_ids bigint[])
returns setof bigint
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
    select f.fragment_id from data.fragments f
    where f.fragment_id = any(p_fragment_ids) and f.active
      and not exists (select 1 from data.fragment_sources s
                      where s.org_id = f.org_id and s.fragment_id = f.fragment_id and s.retired_at is null
                        and s.content_hash = f.content_hash)
$$;

-- data._deactivate_unsourced: data._unsourced's fragments become inactive (and leave BM25).
create or replace function data._deactivate_unsourced(p_fragment_ids bigint[])
returns void
language sql
set search_path = pg_catalog, extensions, pg_temp
as $$
    update data.fragments f set active = false
    where f.fragment_id = any(array(select data._unsourced(p_fragment_ids))) and f.active
$$;

-- data._retire_pointers: pointers of versions older than p_keep_version stop counting.
-- A fragment left with live *near-duplicate* pointers only would cite text those
-- sources do not contain: those pointers are detached and returned (with their own
-- text, read back from their document version) so the caller writes them again as
-- chunks of their own. `affected`: the fragments whose pointers were retired (those left
-- without a live exact source are for data._deactivate_unsourced).
create or replace function data._retire_pointers(p_doc_id bigint, p_keep_version int,
                                                 out detached jsonb, out affected bigint[])
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
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
                          where s.org_id = f.org_id and s.fragment_id = f.fragment_id and s.retired_at is null
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
end
$$;

-- data._retire_sources: data._retire_pointers, then the fragments left without a live
-- exact source become inactive (and leave BM25).
create or replace function data._retire_sources(p_doc_id bigint, p_keep_version int)
returns jsonb
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    retired record;
begin
    retired := data._retire_pointers(p_doc_id, p_keep_version);
    perform data._deactivate_unsourced(retired.affected);
    return retired.detached;
end
$$;

-- data._on_sources_deleted: after pointers are deleted (a document or session removed,
-- or near-duplicate pointers detached), a fragment with no pointer at all left is
-- removed, and the `active` rule is applied to the rest.
create or replace function data._on_sources_deleted()
returns trigger
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    touched bigint[] := array(select distinct g.fragment_id from gone g);
begin
    delete from data.fragments f
    where f.fragment_id = any(touched)
      and not exists (select 1 from data.fragment_sources s where s.org_id = f.org_id and s.fragment_id = f.fragment_id);
    perform data._deactivate_unsourced(touched);
    return null;
end
$$;

create or replace trigger fragment_sources_deleted
    after delete on data.fragment_sources
    referencing old table as gone
    for each statement
    execute function data._on_sources_deleted();

-- data._find_duplicate: the canonical fragment a new text collapses into, if any.
-- Same org, same scope labels and namespace (collapsing across scopes would change
-- who may read it). An identical text matches even when retired (it is revived);
-- a near-duplicate (Hamming distance <= max_distance) must be active, and not among
-- p_inactive (fragments still active that the caller counts as retired:
-- service.add_documents's `kept_ids`).
-- `exact`: the fragment holds this text (a near copy may be at distance 0: SimHash
-- ignores case and spacing).
drop function if exists service.match_fragments(text, text, text, text, text[], text[], bigint[]);
drop function if exists data._find_duplicate(text, text, text, text, text, text, bigint, int);
drop function if exists data._find_duplicate(text, text, text, text, text, text, bigint, int, bigint[]);
create or replace function data._find_duplicate(
    p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespace text,
    p_content_hash text, p_simhash bigint, p_max_distance int default 3, p_inactive bigint[] default '{}')
returns table (fragment_id bigint, distance int, exact boolean)
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
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
          and f.active and not f.fragment_id = any (p_inactive)
          and f.namespace = p_namespace
          and f.repo_id is not distinct from p_repo_id
          and f.persona_id is not distinct from p_persona_id
          and f.session_id is not distinct from p_session_id
          and bit_count((f.simhash # p_simhash)::bit(64)) <= p_max_distance
    )
    select c.fragment_id, c.distance, c.preference = 0 from candidates c
    order by c.preference, c.distance, c.fragment_id
    limit 1
$$;

-- service.match_fragments: for each proposed chunk, the canonical fragment it would
-- collapse into (null: it is new and needs an embedding), and whether that fragment holds
-- the chunk's text (`exact`). Only an exact match is sure to stand in the write: a near
-- one may be a fragment the write retires (service.add_documents), so a chunk matched
-- near carries its vector.
create or replace function service.match_fragments(
    p_org_id text, p_repo_id text, p_persona_id text, p_session_id text,
    p_namespaces text[], p_content_hashes text[], p_simhashes bigint[])
returns table (ordinal int, fragment_id bigint, distance int, exact boolean)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    perform data._require_write(p_org_id, p_repo_id, p_persona_id, p_session_id);
    return query
    select c.ordinal::int, d.fragment_id, d.distance, d.exact
    from unnest(p_namespaces, p_content_hashes, p_simhashes) with ordinality as c(namespace, content_hash, simhash, ordinal)
    left join lateral data._find_duplicate(p_org_id, p_repo_id, p_persona_id, p_session_id,
                                           c.namespace, c.content_hash, c.simhash) d on true
    order by c.ordinal;
end
$$;
comment on function service.match_fragments(text, text, text, text, text[], text[], bigint[])
    is 'Which proposed chunks collapse into existing fragments (exact or SimHash distance <= 3).';

-- data._analyze_new_tenant: a tenant's partitions have no statistics until autovacuum
-- analyzes them (a minute or more after its first writes). Until then the planner takes
-- `org_id = x` for selective where it holds every row, and may probe the primary key of
-- data.fragments through the (org_id, content_hash) index instead, reading the whole
-- tenant each time: so did every foreign-key check of the BM25 postings (one per term
-- of every fragment), which made a new tenant's first minute of ingestion about a third
-- slower. A partition without column statistics (never analyzed: a vacuum alone sets
-- its size, not them) is analyzed once it holds p_min_rows rows (the table owner's
-- right: the callers are security definer functions). Returns how many.
create or replace function data._analyze_new_tenant(p_org_id text, p_min_rows int default 100)
returns int
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
    no int := (select o.org_no from data.orgs o where o.org_id = p_org_id);
    part regclass;
    big boolean;
    analyzed int := 0;
begin
    for part in
        select c.oid::regclass from pg_class c
        where c.oid in (select to_regclass(format('data.%I', t || '_' || no))
                        from unnest(array['fragments', 'embeddings', 'bm25_blocks']) as t)
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
comment on function data._analyze_new_tenant(text, int)
    is 'Analyze the partitions of a tenant that were never analyzed once they hold enough rows (the planner misjudges them until then).';

-- data._match_keys: the five keys under which a chunk of an ingest call is found by the
-- later chunks of the call (service.add_documents): its content hash, cut to 16 bits, and
-- its SimHash's four 16-bit bands (null without one). Two SimHashes within 3 bits agree on
-- one band at least, so every chunk with its text or near it shares a key with it; a key
-- shared by chance only costs a look.
create or replace function data._match_keys(p_content_hash text, p_simhash bigint)
returns int[]
language sql immutable parallel safe
set search_path = pg_catalog, extensions, pg_temp
as $$
    select array[(hashtextextended(p_content_hash, 0) & 65535)::int, ((p_simhash >> 48) & 65535)::int,
                 ((p_simhash >> 32) & 65535)::int, ((p_simhash >> 16) & 65535)::int, (p_simhash & 65535)::int]
$$;

-- service.add_documents: write the chunks of several document versions at once (an
-- ingestion group's, after service.begin_document recorded each): the same result as
-- service.add_fragments called once per version in the given order, in one statement
-- per table. Each chunk becomes a source pointer of its canonical fragment, or a new
-- fragment (with its embedding) when none exists. Resolution keeps add_fragments'
-- rules and order: a chunk is matched against the stored fragments (data._find_duplicate),
-- against the new fragments of earlier versions of the call and the stored ones earlier
-- chunks revived (which the versions written one by one would have found stored and
-- active), and against the new ones of earlier chunks of its own version, with the same
-- preference (exact text, then the nearest SimHash, then the oldest fragment: new ones
-- get their ids in chunk order, after every stored one). Nothing is written while
-- chunks are matched, so every chunk's stored match is asked in one statement first;
-- only a chunk with the same text or a SimHash within 3 of an earlier chunk of the call
-- can match anything written by it, and only those are compared with the call's own.
-- Then the new fragments, their vectors, every pointer, the revived fragments and the
-- readings are written with one statement each, so BM25 indexes the whole call at once
-- (20_bm25.sql), and the references, validity windows and statistics follow.
-- `p_versions`: [{"doc_id", "version", "chunks": [...]}]; `p_embeddings`, when given, the
-- vector of each chunk in call order (null where none: a chunk that matches a fragment),
-- which the chunk's "embedding" (a JSON array) may then omit: a vector sent in binary
-- costs neither its JSON text nor parsing it as numerics. A chunk's optional "reading"
-- (base64) is its text as the learned reranker reads it (app.text.stems.reading);
-- data._check_reading refuses one made of another text. A stored fragment the chunk has
-- exactly (same content hash) gets it if it has none.
create or replace function service.add_documents(p_versions jsonb, p_embeddings extensions.vector[] default null)
returns table (doc_id bigint, ordinal int, fragment_id bigint, created boolean)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
#variable_conflict use_column
declare
    broken_constraint text;
    me_org text;
    item jsonb;
    item_no int;
    doc data.documents;
    ver data.document_versions;
    -- One entry per version (item), in call order.
    i_docs bigint[] := '{}';
    i_versions int[] := '{}';
    i_repos text[] := '{}';
    i_personas text[] := '{}';
    i_sessions text[] := '{}';
    i_negative boolean[] := '{}';
    i_links jsonb[] := '{}';
    i_has_links boolean[] := '{}';
    -- Each chunk's references (item, fragment, references), in chunk order.
    l_items int[] := '{}';
    l_ids bigint[] := '{}';
    l_refs jsonb[] := '{}';
    -- One entry per chunk, in call order.
    r record;
    idx int;
    last_item int := 0;
    canonical bigint;
    distance int;
    model record;
    out_items int[] := '{}';
    ordinals int[] := '{}';
    fragment_ids bigint[] := '{}';
    created_now boolean[] := '{}';
    chunk_rows jsonb[] := '{}';
    -- Stored fragments a chunk resolved to (revived, given a reading, flagged again).
    t_ids bigint[] := '{}';
    t_items int[] := '{}';
    t_chunks jsonb[] := '{}';
    revived bigint[] := '{}';
    -- What later chunks are compared with: the new fragments (new_own: of this version,
    -- from own_from on) and the stored fragments revived so far.
    new_ids bigint[] := '{}';
    new_items int[] := '{}';
    new_models int[] := '{}';
    new_chunks jsonb[] := '{}';
    new_vectors extensions.vector[] := '{}';
    given extensions.vector;
    p_ids bigint[] := '{}';
    p_items int[] := '{}';
    p_new boolean[] := '{}';
    p_namespaces text[] := '{}';
    p_hashes text[] := '{}';
    p_simhashes bigint[] := '{}';
    own_from int := 1;
    own_exact bigint;
    own_pos int;
    near record;
    -- Where later chunks look: per key (data._match_keys, five kinds of 16 bits), the
    -- last p_* position holding it, each position linking to the one before (kind by
    -- kind). A chunk reads the positions of its own keys only: scanning every new
    -- fragment of the call for each chunk grew with the square of the chunks.
    heads int[] := array_fill(0, array[5 * 65536]);
    links int[] := '{}';
    cands int[];
    keys int[];
    kind int;
    at int;
    canonical_pos int;
    p_count int;
    -- Retired fragments service.begin_documents left active (`chunk_hashes`): matched as
    -- retired ones, revived without a write, deactivated after unless a chunk revived them.
    kept_ids bigint[];
begin
    -- Only documents the bound principal may write exist here: another org's id, or one
    -- outside its write grants, is answered exactly like an unknown id.
    me_org := (select c.org_id from data._principal_or_raise() c);
    if jsonb_typeof(p_versions) is distinct from 'array' then
        raise exception 'versions must be a JSON array' using errcode = '22023';
    end if;
    for item, item_no in select e.value, e.n::int from jsonb_array_elements(p_versions) with ordinality as e(value, n) loop
        select d.* into doc from data.documents d where d.doc_id = (item->>'doc_id')::bigint and d.org_id = me_org;
        select v.* into ver from data.document_versions v
        where v.doc_id = (item->>'doc_id')::bigint and v.version = (item->>'version')::int;
        if doc.doc_id is not null then
            begin
                perform data._require_write(doc.org_id, doc.repo_id, doc.persona_id, doc.session_id);
            exception when insufficient_privilege then
                doc := null;
            end;
        end if;
        if doc.doc_id is null or ver.doc_id is null then
            raise exception 'unknown document version %/%', item->>'doc_id', item->>'version' using errcode = 'P0002';
        end if;
        if doc.current_version <> ver.version then
            raise exception 'version % of % is superseded by version %', ver.version, doc.path, doc.current_version
                using errcode = '22023', hint = 'Each path may appear once per ingestion.';
        end if;
        if jsonb_typeof(item->'chunks') is distinct from 'array' then
            raise exception 'chunks must be a JSON array' using errcode = '22023';
        end if;
        i_docs := i_docs || doc.doc_id;
        i_versions := i_versions || ver.version;
        i_repos := i_repos || doc.repo_id;
        i_personas := i_personas || doc.persona_id;
        i_sessions := i_sessions || doc.session_id;
        -- An anti-pattern or known trap (R-DOC-2): by kind, or marked in the metadata.
        i_negative := i_negative
            || (doc.kind = 'anti-pattern' or coalesce(ver.metadata -> 'negative' = 'true'::jsonb, false));
        i_links := i_links || '[]'::jsonb;
        i_has_links := i_has_links || false;
    end loop;

    -- The fragments these versions' documents stopped pointing at in this transaction
    -- (service.begin_documents) that are still active with no live source holding their
    -- text: left active because a chunk of the call was said to hold it (`chunk_hashes`).
    -- They are matched as the retired fragments they are until a chunk revives them.
    kept_ids := array(select data._unsourced(array(
        select distinct s.fragment_id from data.fragment_sources s
        where s.doc_id = any (i_docs) and s.retired_at = now())));

    -- Every chunk with its stored match (nothing is written until all are matched), and
    -- whether an earlier chunk of the call may have its text or a SimHash within 3 of it
    -- (a candidate only: the labels, the namespace and the distance are checked below).
    for r in
        with chunks as materialized (
            select i.n::int as item_no, row_number() over (order by i.n, c.n) as seq, c.value as chunk,
                   c.value->>'namespace' as namespace, c.value->>'content_hash' as content_hash,
                   (c.value->>'simhash')::bigint as simhash, i.repo_id, i.persona_id, i.session_id
            from unnest(i_repos, i_personas, i_sessions) with ordinality as i(repo_id, persona_id, session_id, n)
            cross join lateral jsonb_array_elements(p_versions -> (i.n::int - 1) -> 'chunks') with ordinality as c(value, n)
        ), matched as materialized (
            -- A stored match that is retired and has this chunk's text is revived by it:
            -- later chunks compare with its stored SimHash (`kept`), as with the chunk's.
            select c.*, d.fragment_id as db_id, d.distance as db_distance,
                   d.exact as db_exact, f.active and not f.fragment_id = any (kept_ids) as db_active,
                   f.simhash as db_simhash,
                   case when f.content_hash = c.content_hash and not (f.active and not f.fragment_id = any (kept_ids))
                        then f.simhash end as kept
            from chunks c
            left join lateral data._find_duplicate(me_org, c.repo_id, c.persona_id, c.session_id,
                                                   c.namespace, c.content_hash, c.simhash, 3, kept_ids) d on true
            left join data.fragments f on f.org_id = me_org and f.fragment_id = d.fragment_id
        ), earlier as (
            select e.seq, e.content_hash, e.simhash from matched e
            union all
            select e.seq, e.content_hash, e.kept from matched e where e.kept is not null
        ), firsts as (
            -- An earlier chunk shares a key (data._match_keys) when the key's first chunk
            -- comes before: one pass per key (pairing chunks that share one grew with their
            -- square: a document of many equal sections held its org's write lock for minutes).
            select k.kind, k.key, min(e.seq) as first_seq
            from earlier e
            cross join lateral unnest(data._match_keys(e.content_hash, e.simhash)) with ordinality as k(key, kind)
            where k.key is not null
            group by k.kind, k.key
        ), near_earlier as (
            select distinct c.seq
            from matched c
            cross join lateral unnest(data._match_keys(c.content_hash, c.simhash)) with ordinality as k(key, kind)
            join firsts f on f.kind = k.kind and f.key = k.key and f.first_seq < c.seq
        )
        select c.*, n.seq is not null as near_earlier
        from matched c
        left join near_earlier n on n.seq = c.seq
        order by c.seq
    loop
        if r.item_no <> last_item then
            last_item := r.item_no;
            idx := 0;
            own_from := cardinality(p_ids) + 1;
        end if;
        idx := coalesce((r.chunk->>'ordinal')::int, idx + 1);
        canonical := r.db_id;
        canonical_pos := null;
        distance := r.db_distance;
        p_count := cardinality(p_ids);
        if r.near_earlier then
            -- The positions sharing a key with this chunk: every one that can hold its text
            -- or lie within 3 bits of its SimHash is among them.
            cands := '{}';
            keys := data._match_keys(r.content_hash, r.simhash);
            for kind in 1..5 loop
                continue when keys[kind] is null;
                at := heads[(kind - 1) * 65536 + keys[kind] + 1];
                while at > 0 loop
                    cands := cands || at;
                    at := links[(at - 1) * 5 + kind];
                end loop;
            end loop;
            -- Exact text among this version's new fragments: the stored ones hold no such
            -- text (that chunk would have matched it), so it wins over any stored near-copy.
            select p_ids[c.k], c.k into own_exact, own_pos
            from unnest(cands) as c(k)
            where c.k >= own_from and p_new[c.k] and p_namespaces[c.k] = r.namespace
              and p_hashes[c.k] = r.content_hash
            order by 1 limit 1;
            if own_exact is not null then
                canonical := own_exact;
                canonical_pos := own_pos;
                distance := 0;
            elsif not coalesce(r.db_exact, false) then
                -- What versions written one by one would have found stored: the new
                -- fragments of earlier versions, and the fragments revived so far. The
                -- stored match stands when exact; else an exact one of these wins, then
                -- the nearest (at equal distance the older: the smaller id).
                canonical := r.db_id;
                select p.id, case when p.content_hash = r.content_hash then 0 else 1 end as preference,
                       bit_count((p.simhash # r.simhash)::bit(64))::int as distance, p.pos
                into near
                from (select p_ids[c.k] as id, p_items[c.k] as item_no, p_new[c.k] as is_new,
                             p_namespaces[c.k] as namespace, p_hashes[c.k] as content_hash,
                             p_simhashes[c.k] as simhash, c.k as pos
                      from unnest(cands) as c(k)) p
                join unnest(i_repos, i_personas, i_sessions) with ordinality as i(repo_id, persona_id, session_id, n)
                  on i.n = p.item_no
                where (p.item_no <> r.item_no or not p.is_new) and p.namespace = r.namespace
                  and i.repo_id is not distinct from r.repo_id and i.persona_id is not distinct from r.persona_id
                  and i.session_id is not distinct from r.session_id
                  and (p.content_hash = r.content_hash or bit_count((p.simhash # r.simhash)::bit(64)) <= 3)
                order by 2, 3, 1 limit 1;
                if near.id is not null
                   and (near.preference = 0 or r.db_id is null or near.distance < r.db_distance
                        or (near.distance = r.db_distance and near.id < r.db_id)) then
                    canonical := near.id;
                    canonical_pos := near.pos;
                    distance := near.distance;
                end if;
                if own_from <= cardinality(p_ids) and (canonical is null or distance > 0) then
                    -- A nearer copy among this version's new fragments; at equal distance
                    -- the stored (older) fragment wins, as it would among stored ones.
                    select p_ids[c.k] as id, bit_count((p_simhashes[c.k] # r.simhash)::bit(64))::int as distance,
                           c.k as pos
                    into near
                    from unnest(cands) as c(k)
                    where c.k >= own_from and p_new[c.k] and p_namespaces[c.k] = r.namespace
                      and bit_count((p_simhashes[c.k] # r.simhash)::bit(64)) <= 3
                    order by 2, 1 limit 1;
                    if near.id is not null and (canonical is null or near.distance < distance) then
                        canonical := near.id;
                        canonical_pos := near.pos;
                    end if;
                end if;
            end if;
        end if;
        if canonical is null then
            select m.model_id, m.dims, m.name into model from data.embedding_models m
            where m.namespace = r.namespace and m.status = 'active';
            if model.model_id is null then
                raise exception 'namespace % has no active embedding model', r.namespace using errcode = '55000';
            end if;
            given := p_embeddings[r.seq::int];
            if (given is not null and vector_dims(given) <> model.dims)
               or (given is null and (jsonb_typeof(r.chunk->'embedding') is distinct from 'array'
                                      or jsonb_array_length(r.chunk->'embedding') <> model.dims)) then
                raise exception 'chunk % is new and needs a % -dimension embedding from %', idx, model.dims, model.name
                    using errcode = '22023';
            end if;
            -- The namespace's other live generations (a shadow being built, a retired one
            -- within its window): {"model_id": vector} in "generations". One the writer did
            -- not send (it started before the upgrade) is left to `contexts models upgrade`.
            if jsonb_typeof(r.chunk->'generations') = 'object'
               and exists (select 1 from data.embedding_models m
                           where m.namespace = r.namespace and m.status <> 'active' and m.dropped_at is null
                             and r.chunk->'generations' ? m.model_id::text
                             and (jsonb_typeof(r.chunk->'generations'->(m.model_id::text)) <> 'array'
                                  or jsonb_array_length(r.chunk->'generations'->(m.model_id::text)) <> m.dims)) then
                raise exception 'chunk % has a vector of the wrong size for a model generation', idx
                    using errcode = '22023';
            end if;
            canonical := nextval('data.fragment_id_seq');
            new_ids := new_ids || canonical;
            new_items := new_items || r.item_no;
            new_models := new_models || model.model_id;
            new_chunks := new_chunks || r.chunk;
            new_vectors := new_vectors || coalesce(given, (r.chunk->'embedding')::text::vector);
            p_ids := p_ids || canonical;
            p_items := p_items || r.item_no;
            p_new := p_new || true;
            p_namespaces := p_namespaces || r.namespace;
            p_hashes := p_hashes || r.content_hash;
            p_simhashes := p_simhashes || r.simhash;
            created_now := created_now || true;
        elsif canonical_pos is not null and canonical_pos >= own_from and p_new[canonical_pos] then
            created_now := created_now || false;
        else
            -- A stored fragment (or a new one of an earlier version: stored, as far as this
            -- version is concerned): revived when retired, given this chunk's reading, and
            -- flagged again when this document wrote it.
            t_ids := t_ids || canonical;
            t_items := t_items || r.item_no;
            t_chunks := t_chunks || r.chunk;
            if canonical = r.db_id and not r.db_active and not canonical = any (revived) then
                revived := revived || canonical;
                p_ids := p_ids || canonical;
                p_items := p_items || r.item_no;
                p_new := p_new || false;
                p_namespaces := p_namespaces || r.namespace;
                p_hashes := p_hashes || r.content_hash;
                p_simhashes := p_simhashes || r.db_simhash;
            end if;
            created_now := created_now || false;
        end if;
        if cardinality(p_ids) > p_count then
            -- A new or revived fragment: later chunks find its position under its keys.
            at := cardinality(p_ids);
            keys := data._match_keys(p_hashes[at], p_simhashes[at]);
            for kind in 1..5 loop
                if keys[kind] is null then
                    links[(at - 1) * 5 + kind] := 0;
                else
                    links[(at - 1) * 5 + kind] := heads[(kind - 1) * 65536 + keys[kind] + 1];
                    heads[(kind - 1) * 65536 + keys[kind] + 1] := at;
                end if;
            end loop;
        end if;
        out_items := out_items || r.item_no;
        ordinals := ordinals || idx;
        fragment_ids := fragment_ids || canonical;
        chunk_rows := chunk_rows || r.chunk;
        if r.chunk ? 'references' then
            -- Gathered as arrays, made into each version's list once after the loop:
            -- appending to a jsonb copies it whole, which grew with the square of a
            -- document's chunks.
            i_has_links[r.item_no] := true;
            l_items := l_items || r.item_no;
            l_ids := l_ids || canonical;
            l_refs := l_refs || (r.chunk->'references');
        end if;
    end loop;
    if cardinality(l_items) > 0 then
        i_links := array(
            select coalesce(x.links, '[]'::jsonb)
            from generate_subscripts(i_docs, 1) as n
            left join (select u.item_no, jsonb_agg(jsonb_build_object('fragment_id', u.id, 'references', u.refs)
                                                   order by u.ord) as links
                       from unnest(l_items, l_ids, l_refs) with ordinality as u(item_no, id, refs, ord)
                       group by u.item_no) x on x.item_no = n
            order by n);
    end if;

    insert into data.fragments (
        fragment_id, org_id, repo_id, persona_id, session_id, doc_id, doc_version, namespace, kind, owner,
        owner_source, heading_path, symbol, text, content_hash, token_count, chunker_version, simhash, tsv,
        created_at, updated_at, negative, reading)
    select n.id, d.org_id, d.repo_id, d.persona_id, d.session_id, d.doc_id, v.version,
           c->>'namespace', d.kind, coalesce(d.owner, 'unowned'), d.owner_source,
           coalesce(array(select jsonb_array_elements_text(c->'heading_path')), '{}'),
           c->>'symbol', c->>'text', c->>'content_hash', (c->>'token_count')::int,
           c->>'chunker_version', (c->>'simhash')::bigint,
           api.lexical_document(c->>'lexical_heading', c->>'text'),
           coalesce(v.source_ts, now()), coalesce(v.source_ts, now()), i_negative[n.item_no],
           decode(c->>'reading', 'base64')
    from unnest(new_ids, new_items, new_chunks) as n(id, item_no, c)
    join data.documents d on d.doc_id = i_docs[n.item_no]
    join data.document_versions v on v.org_id = d.org_id and v.doc_id = d.doc_id and v.version = i_versions[n.item_no]
    order by n.id;

    insert into data.embeddings (fragment_id, model_id, org_id, repo_id, persona_id, session_id, embedding)
    select n.id, n.model_id, me_org, i_repos[n.item_no], i_personas[n.item_no], i_sessions[n.item_no], n.v
    from unnest(new_ids, new_items, new_models, new_vectors) as n(id, item_no, model_id, v)
    union all
    select n.id, m.model_id, me_org, i_repos[n.item_no], i_personas[n.item_no], i_sessions[n.item_no],
           (n.c -> 'generations' -> (m.model_id::text))::text::vector
    from unnest(new_ids, new_items, new_chunks) as n(id, item_no, c)
    join data.embedding_models m
      on m.namespace = n.c->>'namespace' and m.status <> 'active' and m.dropped_at is null
     and jsonb_typeof(n.c -> 'generations') = 'object'
     and (n.c -> 'generations') ? m.model_id::text;

    insert into data.fragment_sources (fragment_id, org_id, doc_id, doc_version, ordinal, anchor, start_line,
                                       end_line, content_hash)
    select s.fragment_id, me_org, i_docs[s.item_no], i_versions[s.item_no], s.ordinal, coalesce(s.c->>'anchor', ''),
           coalesce((s.c->>'start_line')::int, 1), coalesce((s.c->>'end_line')::int, 1), s.c->>'content_hash'
    from unnest(fragment_ids, out_items, ordinals, chunk_rows) with ordinality as s(fragment_id, item_no, ordinal, c, n)
    order by s.n;

    if cardinality(t_ids) > 0 then
        update data.fragments f set active = true
        where f.org_id = me_org and f.fragment_id = any (revived) and not f.active;
        -- Stored before readings: the chunk's is the fragment's when the text is the same
        -- (the first such chunk's, as one version after another would have written it).
        update data.fragments f set reading = t.reading
        from (select distinct on (t.id) t.id, decode(t.c->>'reading', 'base64') as reading, t.c->>'content_hash' as hash
              from unnest(t_ids, t_chunks) with ordinality as t(id, c, n)
              where t.c ? 'reading'
              order by t.id, t.n) t
        where f.org_id = me_org and f.fragment_id = t.id and f.reading is null and f.content_hash = t.hash;
        -- A new version of the document that wrote the fragment decides its flag and its
        -- kind again (the same text sent with another kind is a new version).
        update data.fragments f set negative = t.negative, kind = d.kind
        from (select distinct t.id, i_docs[t.item_no] as doc_id, i_negative[t.item_no] as negative
              from unnest(t_ids, t_items) as t(id, item_no)) t
        join data.documents d on d.doc_id = t.doc_id
        where f.org_id = me_org and f.fragment_id = t.id and f.doc_id = t.doc_id and d.org_id = me_org
          and (f.negative is distinct from t.negative or f.kind is distinct from d.kind);
    end if;
    -- The rule for `active` on the kept fragments no chunk revived.
    perform data._deactivate_unsourced(kept_ids);

    -- The references of each version whose chunks carry them (a whole version's do;
    -- re-homed pointers do not), recorded and resolved together (data._record_links_of).
    if true = any (i_has_links) then
        perform data._record_links_of(array(select i_docs[n] from generate_subscripts(i_docs, 1) n
                                            where i_has_links[n] order by n),
                                      array(select i_links[n] from generate_subscripts(i_docs, 1) n
                                            where i_has_links[n] order by n));
    end if;
    -- Windows of these documents' fragments and of those they supersede or are
    -- superseded by (sql/functions/48_validity.sql).
    if cardinality(i_docs) > 0 then
        perform data._refresh_validity(me_org, i_docs);
    end if;
    if cardinality(new_ids) > 0 then
        perform data._analyze_new_tenant(me_org);
    end if;
    return query select i_docs[s.item_no], s.ordinal, s.fragment_id, s.created
                 from unnest(out_items, ordinals, fragment_ids, created_now) with ordinality as s(item_no, ordinal, fragment_id, created, n)
                 order by s.n;
exception when check_violation or not_null_violation or invalid_text_representation or unique_violation then
    get stacked diagnostics broken_constraint = constraint_name;
    perform data._raise_invalid('invalid chunk', sqlerrm, broken_constraint);
end
$$;
comment on function service.add_documents(jsonb, extensions.vector[]) is 'Write several document versions'' chunks at once (the bound principal needs write grants): what service.add_fragments does for each, in order, one statement per table.';

-- service.add_fragments: write the chunks of one document version
-- (service.add_documents with one version).
create or replace function service.add_fragments(p_doc_id bigint, p_doc_version int, p_chunks jsonb)
returns table (ordinal int, fragment_id bigint, created boolean)
language sql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
    select a.ordinal, a.fragment_id, a.created
    from service.add_documents(jsonb_build_array(jsonb_build_object('doc_id', p_doc_id, 'version', p_doc_version,
                                                                    'chunks', p_chunks))) a
$$;
comment on function service.add_fragments(bigint, int, jsonb) is 'Write one document version''s chunks (the bound principal needs write grants): new fragments or pointers to canonical ones.';

-- service.delete_document: a document leaves retrieval at once. Every live source pointer
-- of its current version is retired (data._retire_sources), so a fragment no other
-- live source holds exactly becomes inactive: out of BM25 (the triggers), out of the
-- dense and lexical lists (both read active fragments only). Its versions, pointers and
-- the traces citing it stay for audit; the row is marked deleted (hidden from listings
-- and reads; writing the path again revives it as a new version). Near-duplicate
-- pointers of other documents that leaned on its text are returned as `rehome`, for
-- the caller to write again as chunks of their own (as a new version does). A document
-- the principal may not read is unknown (P0002); one it may read but not write is 42501.
create or replace function service.delete_document(p_doc_id bigint)
returns table (doc_id bigint, org_id text, path text, version int, fragments_retired int, rehome jsonb)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
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
comment on function service.delete_document(bigint)
    is 'Delete a document the bound principal may write: its fragments leave retrieval and BM25 at once; versions, sources and traces stay; returns near-duplicate pointers to re-home.';

-- data._check_reading: a fragment's reading carries the first 4 bytes of the SHA-256 of
-- the text it was made of; one of another text (a writer's mistake, or a text changed
-- under it) is refused, so a retrieval can decode readings without checking them. A
-- trigger on the two columns, not a check constraint: a check would hash the whole text
-- again on every update of any column (active, owner, negative, validity).
create or replace function data._check_reading()
returns trigger
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
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

create or replace trigger fragments_reading_text
    before insert or update of text, reading on data.fragments
    for each row
    execute function data._check_reading();

-- service.reading_backlog: fragments whose reading is missing or was written by another
-- tokenizer (its first bytes are not p_prefix), in id order after p_after: what
-- `contexts rerank readings` writes (inactive ones too: a fragment comes back when a
-- document holds its text again). The migrator's (every org).
create or replace function service.reading_backlog(p_prefix bytea, p_after bigint default 0, p_limit int default 256)
returns table (fragment_id bigint, org_id text, text text)
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
    select f.fragment_id, f.org_id, f.text
    from data.fragments f
    where f.fragment_id > p_after
      and (f.reading is null or substring(f.reading from 1 for octet_length(p_prefix)) <> p_prefix)
    order by f.fragment_id
    limit p_limit
$$;
comment on function service.reading_backlog(bytea, bigint, int) is 'Fragments whose learned-reranker reading is missing or outdated, in id order.';

-- service.reading_backlog_size: how many service.reading_backlog would list, without their texts.
create or replace function service.reading_backlog_size(p_prefix bytea)
returns bigint
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
    select count(*) from data.fragments f
    where f.reading is null or substring(f.reading from 1 for octet_length(p_prefix)) <> p_prefix
$$;
comment on function service.reading_backlog_size(bytea) is 'How many fragments lack an up-to-date learned-reranker reading.';

-- service.set_readings: readings for existing fragments (one per id, with its org: one
-- partition probed per fragment). Each is checked against its text (data._check_reading).
create or replace function service.set_readings(p_fragment_ids bigint[], p_org_ids text[], p_readings bytea[])
returns int
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
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
comment on function service.set_readings(bigint[], text[], bytea[]) is 'Write the learned-reranker readings of existing fragments (`contexts rerank readings`).';

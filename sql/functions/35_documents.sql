-- Reading documents: a page of the documents a scope holds, one document's text and
-- versions, and the metadata of the versions a retrieval cites. All security invoker:
-- row-level security on data.documents and data.document_versions decides what the
-- caller sees, exactly as for fragments, and a requested scope outside its grants is
-- refused (42501) by data._require_read. Deleted documents (service.delete_document in
-- 30_ingest.sql) are neither listed nor read here; their rows stay for audit.

-- api.list_documents: the documents a retrieval in this scope reads from (the same
-- bottom-up rule as fragments, data._in_scope: org-wide documents, the repo's (every
-- repo's when none is named), and persona or session documents only when that persona
-- or session is named), in doc_id order, one page at a time: pass the last doc_id of a
-- page as p_after for the next one. Optional filters: path prefix, kind, owner, and
-- updated at or after p_updated_since.
create or replace function api.list_documents(
    p_org_id text,
    p_repo_id text default null,
    p_persona_id text default null,
    p_session_id text default null,
    p_path_prefix text default null,
    p_limit int default 50,
    p_after bigint default null,
    p_kind text default null,
    p_owner text default null,
    p_updated_since timestamptz default null)
returns table (
    doc_id bigint, org_id text, repo_id text, persona_id text, session_id text, path text, kind text,
    version int, language text, author text, owner text, source_ts timestamptz, fragments int,
    created_at timestamptz, updated_at timestamptz)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
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
             where s.org_id = d.org_id and s.doc_id = d.doc_id and s.doc_version = d.current_version and s.retired_at is null),
           d.created_at, d.updated_at
    from data.documents d
    join data.document_versions v on v.org_id = d.org_id and v.doc_id = d.doc_id and v.version = d.current_version
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
comment on function api.list_documents(text, text, text, text, text, int, bigint, text, text, timestamptz)
    is 'A page of the documents a scope holds (those the caller may read, not deleted), in doc_id order, filtered by path prefix, kind, owner and update time; p_after is the last doc_id of the previous page.';

-- api.get_document: one version of a document (the current one by default) with its
-- text, or a slice of it (p_offset and p_max_chars count characters), the fragments
-- that version was cut into, and the list of all its versions. An unknown document, a
-- deleted one, one the caller may not read and an unknown version are all P0002.
create or replace function api.get_document(
    p_doc_id bigint, p_version int default null, p_offset int default 0, p_max_chars int default null)
returns table (
    doc_id bigint, org_id text, repo_id text, persona_id text, session_id text, path text, kind text,
    version int, current_version int, language text, author text, owner text, source_ts timestamptz,
    metadata jsonb, content_hash text, content text, content_chars int, content_offset int,
    created_at timestamptz, updated_at timestamptz, fragments jsonb, versions jsonb)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
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
comment on function api.get_document(bigint, int, int, int)
    is 'One version of a readable document (current by default), its text or a slice of it, its fragments, and every version it has had.';

-- api.version_metadata: the stored metadata of the given document versions (pairs by
-- position), those the caller may read: what a retrieval returns beside each fragment.
create or replace function api.version_metadata(p_doc_ids bigint[], p_versions int[])
returns table (doc_id bigint, version int, metadata jsonb)
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
    select v.doc_id, v.version, v.metadata
    from data.document_versions v
    join unnest(p_doc_ids, p_versions) as w(doc_id, version) on w.doc_id = v.doc_id and w.version = v.version
$$;
comment on function api.version_metadata(bigint[], int[]) is 'Metadata of readable document versions, as stored at ingestion.';

-- Supersession and validity windows (the knowledge lifecycle; docs/adr/0016). A fragment
-- is current in [valid_from, valid_until); retrieval keeps only fragments current at the
-- time it is as of (now by default) unless it asks for superseded ones too.
--
-- A document's window comes from its current version's metadata (valid_from,
-- valid_until: ISO 8601, checked at ingest) and from supersession: a live document S
-- that supersedes D (declared in S's or D's metadata, front matter or header:
-- "Supersedes ADR-3", "Status: superseded by ADR-7"; data.fragment_links) ends D's
-- window when S starts, and S's own window starts then. S starts at its valid_from,
-- else at its own time: the earliest of its versions' timestamps (a request's
-- `timestamp`; for `contexts sync`, the commit that last changed the file, and
-- `git_added_at`, the commit that added it), a version without one counting from when
-- it was written. Like a citation counted toward authority, a supersession counts only
-- when every reader of D may read S (S's scope labels are D's or fewer): what a reader
-- cannot see never hides what it can. A fragment cited from several live documents is
-- current while any of them is.

-- data._metadata_time: a metadata value as a time, null when absent or not a time
-- (ingestion refuses such values; rows written otherwise never break a refresh).
create or replace function data._metadata_time(p_value text)
returns timestamptz
language sql stable
set search_path = pg_catalog, pg_temp
as $$
    select case when p_value is not null and pg_input_is_valid(p_value, 'timestamptz')
                then p_value::timestamptz end
$$;
comment on function data._metadata_time(text) is 'A metadata value as a time; null when absent or not a time.';

-- data._refresh_validity: recompute the window of every fragment with a live source in
-- these documents, in the documents they supersede, and in those superseding them.
-- Called after a version's fragments and references are written (api.add_fragments)
-- and after a document is deleted (api.delete_document): once per document written, so
-- the common case (no claim, no date, no window) returns after three index probes.
create or replace function data._refresh_validity(p_org_id text, p_doc_ids bigint[])
returns int
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
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
               -- The document's own time: its earliest version's (least() skips nulls).
               (select min(least(coalesce(e.source_ts, e.created_at),
                                 data._metadata_time(e.metadata ->> 'git_added_at')))
                from data.document_versions e where e.doc_id = d.doc_id) as began_at
        from data.documents d
        join data.document_versions v on v.doc_id = d.doc_id and v.version = d.current_version
        where d.doc_id = any (doc_ids || array(select s.newer from said s) || array(select s.older from said s))
          and d.org_id = p_org_id and d.deleted_at is null
    ), counted as (
        -- Supersessions that count: both ends live, the newer one readable by every
        -- reader of the older one.
        select s.newer, s.older, coalesce(n.valid_from, n.began_at) as since
        from said s
        join starts n on n.doc_id = s.newer
        join starts o on o.doc_id = s.older
        where s.newer <> s.older
          and (n.repo_id is null or n.repo_id is not distinct from o.repo_id)
          and (n.persona_id is null or n.persona_id is not distinct from o.persona_id)
          and (n.session_id is null or n.session_id is not distinct from o.session_id)
    ), windows as (
        select o.doc_id,
               coalesce(o.valid_from,
                        case when exists (select 1 from counted c where c.newer = o.doc_id) then o.began_at end)
                   as valid_from,
               least(o.valid_until, (select min(c.since) from counted c where c.older = o.doc_id)) as valid_until
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
comment on function data._refresh_validity(text, bigint[]) is 'Recompute the validity windows of the fragments of these documents and of the documents they supersede or are superseded by.';

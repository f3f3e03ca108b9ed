-- 0014_validity: supersession and validity windows (issue: knowledge lifecycle).
--
--   * data.fragments.valid_from / valid_until: the window in which a fragment is
--     current, kept by data._refresh_validity (sql/functions/48_validity.sql) from its
--     documents' metadata (valid_from, valid_until) and from supersession: a document
--     another live document supersedes ends when that one starts. Null: unbounded.
--   * data.fragment_links gains two link types, 'supersedes' and 'superseded_by' (an
--     ADR saying "supersedes ADR-3", "superseded by 0007", or metadata / front matter
--     `supersedes:` and `superseded_by:`); they are citations as well.
--   * data._dense_hits, api.retrieve_candidates and api.retrieve take the time a
--     retrieval is as of and whether superseded fragments are kept, and return each
--     fragment's window: dropped here, created again by sql/functions.
--
-- Rows written before this migration have no window (always current); a document says
-- what it supersedes the next time it is ingested.

alter table data.fragments
    add column valid_from timestamptz,
    add column valid_until timestamptz;
comment on column data.fragments.valid_from is 'Current from this time (null: always was); kept by data._refresh_validity.';
comment on column data.fragments.valid_until is 'Current until this time, exclusive (null: still is): metadata valid_until, or when a superseding document starts.';
-- Retrieval skips every validity test for an org none of whose fragments has a window.
create index fragments_windowed on data.fragments (org_id) where valid_from is not null or valid_until is not null;

alter table data.fragment_links drop constraint fragment_links_link_type_check;
-- Supersession claims, found from either end in a few probes (data._refresh_validity runs
-- once per document written).
create index fragment_links_superseding on data.fragment_links (doc_id)
    where link_type in ('supersedes', 'superseded_by');
create index fragment_links_superseded on data.fragment_links (target_doc_id)
    where link_type in ('supersedes', 'superseded_by');
alter table data.fragment_links add constraint fragment_links_link_type_check
    check (link_type in ('link', 'url', 'import', 'symbol', 'adr', 'metadata', 'supersedes', 'superseded_by'));

drop function if exists api.retrieve(text, text, text, text, text, int, int, jsonb);
drop function if exists api.retrieve_candidates(text, text, jsonb, text, text, text, int, int, int, jsonb, text, text[], timestamptz, timestamptz, text);
drop function if exists data._dense_hits(text, int, int, extensions.vector, int, text, text, text, bigint[], text[], timestamptz, timestamptz, boolean);

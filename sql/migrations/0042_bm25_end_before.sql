-- 0042_bm25_end_before: data.bm25_terms.last_first_id becomes end_before, where the
-- (group, term)'s list ended before the last write. data._bm25_index's upsert sets it
-- from the row it updates, so its RETURNING can tell each write which of its postings
-- fall inside the list (each joins the sealed block it falls in, docs/adr/0025) and
-- which are appended. Only the writing statement reads it: existing values need no
-- rewrite.
alter table data.bm25_terms rename column last_first_id to end_before;

comment on column data.bm25_terms.end_before
    is 'Where the list ended before the last write (set by the upsert, read by that write''s RETURNING).';

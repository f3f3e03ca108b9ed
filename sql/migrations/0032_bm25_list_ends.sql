-- 0032_bm25_list_ends: where each (scope group, term)'s postings end, kept beside its
-- document frequency (docs/adr/0025, "Writes"), so appending a write's postings needs no
-- read of the blocks:
--   * list_end: the largest fragment id ever written to the (group, term)'s blocks. A
--     write whose smallest id is above it appends; one at or below it (a fragment revived
--     under its old id, or a writer that got its ids before another committed) is merged
--     into the blocks from where it falls. Removals do not lower it: a write below a
--     removed end takes the merging path, which is right whatever the blocks hold.
--   * last_first_id: the smallest id of the last write (what the upsert compares with
--     list_end: an ON CONFLICT update sees the proposed row's columns only).
--   * appends: writes since the group and term's open blocks were last merged; the
--     eighth merges them (the open-block count the writer used to read from the blocks).
alter table data.bm25_terms
    add column list_end bigint not null default 0,
    add column last_first_id bigint not null default 0,
    add column appends smallint not null default 0;

update data.bm25_terms t
set list_end = b.list_end, last_first_id = b.list_end, appends = least(b.open_blocks, 7)
from (select org_id, term, scope_group, max(last_id) as list_end,
             count(*) filter (where not sealed) as open_blocks
      from data.bm25_blocks group by org_id, term, scope_group) b
where b.org_id = t.org_id and b.term = t.term
  and b.scope_group = data._bm25_group(t.repo_id, t.persona_id, t.session_id);

comment on column data.bm25_terms.list_end
    is 'The largest fragment id ever written to this group and term''s blocks: a write above it appends.';
comment on column data.bm25_terms.last_first_id
    is 'The smallest fragment id of the last write (compared with list_end by the upsert).';
comment on column data.bm25_terms.appends
    is 'Writes since this group and term''s open blocks were last merged (the eighth merges them).';

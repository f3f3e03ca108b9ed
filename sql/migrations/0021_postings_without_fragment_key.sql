-- 0021_postings_without_fragment_key: BM25 postings are derived rows that only the
-- statement triggers on data.fragments write (data._bm25_index) and remove
-- (data._bm25_unindex, on retirement, re-indexing and delete), in the same statement as
-- the fragment change. Their foreign key to data.fragments checked each posting on its
-- own: one probe of the partitioned fragments table per inserted row, 80% of the time
-- BM25 indexing took (90,477 postings of 1,000 fragments: 15.9 to 20.9 s with the key,
-- 2.3 to 3.5 s without, three alternated rounds; docs/adr/0004, amendment). The key to
-- data.orgs stays: an org's deletion still cascades to its postings.

alter table data.bm25_postings drop constraint if exists bm25_postings_fragment_id_org_id_fkey;

-- 0041_fragments_without_gin: data.fragments loses its GIN index on `tsv`. BM25 reads
-- its own index (data.bm25_blocks, migration 0027) and nothing in Contexts searches
-- `tsv @@ query`; under row-level security an analyst's `@@` could not use the GIN
-- index anyway (`@@` is not leakproof, docs/dba.md). Every fragment written or revived
-- still paid for it (each of its lexemes entered the GIN's pending list, flushed now
-- and then by an unlucky writer), and an update of `active`, which cannot be a HOT
-- update, re-entered them all (docs/adr/0025, ingest's database path).

drop index if exists data.fragments_tsv;

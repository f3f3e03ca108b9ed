-- 0020_drop_single_fragment_bm25: the one-fragment BM25 wrappers data._bm25_add and
-- data._bm25_remove lost their last caller when the triggers began indexing whole
-- statements (data._bm25_index, data._bm25_unindex over transition tables). Re-applied
-- function files never drop what they no longer define, so a migration does.

drop function if exists data._bm25_add(text, bigint, tsvector, text, text, text);
drop function if exists data._bm25_remove(text, bigint, tsvector, text, text, text);

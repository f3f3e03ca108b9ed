-- contexts_bm25 1.0: packed BM25 postings (docs/adr/0025-lexical-blocks.md).
\echo Use "CREATE EXTENSION contexts_bm25" to load this file. \quit

create function bm25_pack(ids bigint[], tfs int[], dls int[]) returns bytea[]
    as 'MODULE_PATHNAME', 'bm25_pack' language c immutable strict parallel safe;
comment on function bm25_pack(bigint[], int[], int[]) is
    'One term''s postings (fragment id, term frequency, fragment length) packed in blocks, sorted by id.';

create function bm25_merge(blocks bytea[], drop_ids bigint[] default null) returns bytea[]
    as 'MODULE_PATHNAME', 'bm25_merge' language c immutable parallel safe;
comment on function bm25_merge(bytea[], bigint[]) is
    'The postings of blocks of one term, less those of drop_ids, packed again.';

create function bm25_block_first(block bytea) returns bigint
    as 'MODULE_PATHNAME', 'bm25_block_first' language c immutable strict parallel safe;
create function bm25_block_last(block bytea) returns bigint
    as 'MODULE_PATHNAME', 'bm25_block_last' language c immutable strict parallel safe;
create function bm25_block_count(block bytea) returns int
    as 'MODULE_PATHNAME', 'bm25_block_count' language c immutable strict parallel safe;

create function bm25_postings(block bytea, out fragment_id bigint, out tf int, out dl int) returns setof record
    as 'MODULE_PATHNAME', 'bm25_postings' language c immutable strict parallel safe rows 500;
comment on function bm25_postings(bytea) is 'The postings of a block, in id order.';

create function bm25_top(term_nos int[], blocks bytea[], idfs float8[], k int, k1 float8, b float8,
                         avgdl float8, only_ids bigint[] default null, also_ids bigint[] default null,
                         out fragment_id bigint, out score float8, out in_top boolean) returns setof record
    as 'MODULE_PATHNAME', 'bm25_top' language c immutable parallel safe rows 100;
comment on function bm25_top(int[], bytea[], float8[], int, float8, float8, float8, bigint[], bigint[]) is
    'Exact Okapi BM25 top k over packed blocks (MaxScore, block-max skipping); also the scores of also_ids.';

-- Single-pass retrieval: api.retrieve_candidates completes both sides' scores itself
-- (one BM25 pass, each query vector parsed once), so data._fuse takes the pooled,
-- completed candidates instead of re-reading them. A signature change cannot be made
-- by `create or replace`: the previous data._fuse is dropped here and
-- sql/functions/45_fusion.sql creates the new one.
drop function if exists data._fuse(
    text, text, text, text, text, jsonb, bigint[], float8[], bigint[], float8[], boolean, boolean, jsonb, int);

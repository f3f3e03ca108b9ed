-- Weighted score fusion: api.retrieve_candidates gains a p_fusion argument and
-- per-candidate normalized scores. A signature change cannot be made by
-- `create or replace`, so the previous signature is dropped here and
-- sql/functions/40_retrieve.sql creates the new one.
drop function if exists api.retrieve_candidates(text, text, jsonb, text, text, text, int, int, int);

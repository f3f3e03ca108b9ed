-- 0022_fragment_readings: each fragment's text as the learned reranker reads it
-- (docs/adr/0015, third amendment), written once at ingest so that a retrieval decodes it
-- instead of tokenizing every candidate's text again.
--
--   * data.fragments.reading: int32 stem ids and counts in the layout
--     app.retrieve.features.reading writes, checked against the text's digest by a
--     trigger (sql/functions/30_ingest.sql). Null for rows written before this migration
--     or by a writer that sends none: the reranker then reads the text, as before, and
--     `contexts rerank readings` writes the missing (or outdated) ones.
--   * api.retrieve_candidates and api.context_candidates return it (before `profile`):
--     dropped here, created again by sql/functions.

alter table data.fragments add column reading bytea;
-- Every row's reading is null here: nothing to validate (and no scan under the lock).
alter table data.fragments add constraint fragments_reading_size check (octet_length(reading) <= 65536) not valid;
comment on column data.fragments.reading is
    'The text as the learned reranker reads it (app.retrieve.features.reading); null: read from the text.';

drop function if exists api.retrieve_candidates(text, text, jsonb, text, text, text, int, int, int, jsonb, text, text[], timestamptz, timestamptz, text, timestamptz, boolean);
drop function if exists api.context_candidates(text, text[], text, jsonb, jsonb, int, boolean);

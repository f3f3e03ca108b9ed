-- 0025_supersession_evidence: supersession only from a document's own declarations, with
-- their evidence; what validity windows leave out of a retrieval, in its trace; pins
-- whose fragment is superseded, said so (docs/adr/0016, amendment).
--
--   * data.fragment_links.evidence: for a supersedes / superseded_by edge, where the
--     document declares it and the line as written ("line 3: - Status: Superseded by
--     ADR-7", "front matter line 2: supersedes: ADR-3", "metadata supersedes: ..."); null
--     for other references and for edges recorded before this migration (a document
--     gives its evidence when it is next ingested).
--   * api.fragment_links returns it: dropped here, created again by sql/functions.
--   * data.retrieval_traces.left_out: the fragments a retrieval's validity test kept out
--     that would have ranked, and the pins it could not serve, each with its reason and
--     what superseded it (api.validity_left_out); shown, redacted like the candidates, by
--     api.retrieval_traces. api.record_trace takes it: dropped here, created again.
--   * api.pins_list says whether a pin's fragment is superseded (outside its window now)
--     and by what: dropped here, created again.

alter table data.fragment_links add column evidence text;
alter table data.fragment_links add constraint fragment_links_evidence_length
    check (length(evidence) between 1 and 2048);
comment on column data.fragment_links.evidence is
    'For a supersession: where the citing document declares it and the line as written (null: another kind of reference, or recorded before migration 0025).';

drop function if exists api.fragment_links(bigint);

alter table data.retrieval_traces add column left_out jsonb;
comment on column data.retrieval_traces.left_out is
    'What the validity test kept out that the retrieval would otherwise have held: fragments that would have ranked and pins it could not serve, each with its reason and the documents superseding it (null: nothing, or recorded before migration 0025).';

drop function if exists api.record_trace(text, text, jsonb, jsonb, jsonb, float8, jsonb);
drop function if exists api.pins_list(text, text, text, text, boolean);

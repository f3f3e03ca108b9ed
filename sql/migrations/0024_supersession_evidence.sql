-- 0024_supersession_evidence: supersession only from a document's own declarations, with
-- their evidence; what validity windows leave out of a retrieval, in its trace; pins
-- whose fragment is superseded, said so (docs/adr/0016, amendment).
--
--   * data.fragment_links.evidence: for a supersedes / superseded_by edge, where the
--     document declares it and the line as written ("line 3: - Status: Superseded by
--     ADR-7", "front matter line 2: supersedes: ADR-3", "metadata supersedes: ..."); null
--     for other references and for edges recorded before this migration (a document
--     gives its evidence when it is next ingested).
--   * api.fragment_links returns it: dropped here, created again by sql/functions.

alter table data.fragment_links add column evidence text;
alter table data.fragment_links add constraint fragment_links_evidence_length
    check (length(evidence) between 1 and 2048);
comment on column data.fragment_links.evidence is
    'For a supersession: where the citing document declares it and the line as written (null: another kind of reference, or recorded before migration 0024).';

drop function if exists api.fragment_links(bigint);

-- Documents an agent can manage, retrieval filters, session packs.
--   * data.documents gains its owner (the named human of R-DOC-3, also kept on each
--     fragment) and a tombstone: a deleted document keeps its versions, source pointers
--     and the traces that cite it (for audit), while its fragments leave every index.
--   * Signatures that change in this release are dropped here; sql/functions creates
--     the new ones (`create or replace` cannot change a signature):
--     api.begin_document (+ p_owner), api.list_documents (+ kind, owner, updated-since
--     filters; owner and deleted columns), api.get_document (+ owner, versions) and
--     api.retrieve_candidates (+ path prefix, kinds, updated-since/until filters).
alter table data.documents add column owner text;
alter table data.documents add column deleted_at timestamptz;
alter table data.documents add column deleted_by text;
comment on column data.documents.owner is 'Named owner of the current version (R-DOC-3); its fragments carry it too.';
comment on column data.documents.deleted_at is 'Set by api.delete_document: the document is gone from listings and retrieval; its versions and sources stay for audit.';
comment on column data.documents.deleted_by is 'Principal that deleted the document.';

-- The owner of existing documents: the owner written on the fragments of their
-- current version (every chunk of one ingestion carries the same owner).
update data.documents d
set owner = (select f.owner from data.fragment_sources s
             join data.fragments f on f.fragment_id = s.fragment_id and f.org_id = s.org_id
             where s.doc_id = d.doc_id and s.doc_version = d.current_version
             order by s.ordinal limit 1);

drop function if exists api.begin_document(text, text, text, text, text, text, text, text, text, text, timestamptz, jsonb);
drop function if exists api.list_documents(text, text, text, text, text, int, bigint);
drop function if exists api.get_document(bigint, int, int, int);
drop function if exists api.retrieve_candidates(text, text, jsonb, text, text, text, int, int, int, jsonb);

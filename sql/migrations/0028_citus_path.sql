-- 0028_citus_path: the schema a Citus cluster needs (docs/scale.md, "Tenants on Citus"),
-- with the single-node product unchanged.
--
--   * Principal bindings are signed settings on every server (sql/functions/10_access.sql,
--     11_auth.sql): `SET LOCAL contexts.binding = 'signed.<hmac>.<org>.<principal>.<key>'`,
--     signed with data.binding_keys over the transaction's identity (the backend and its
--     start on one server; Citus's distributed transaction id, the same on coordinator and
--     workers, where Citus is installed). A worker evaluating row-level security verifies
--     it as the primary and a hot standby do. The primary's nonce table,
--     data.principal_bindings, is no longer written or read: dropped here, with the
--     standby-only helpers the signed form replaces.
--   * data.document_versions.org_id: every tenant table names its tenant (Citus
--     distributes by it), filled here from data.documents for existing rows; a trigger
--     fills it for a writer that leaves it out and refuses one naming another org than
--     the document's.
--   * data.fragment_authority: a table refreshed per org (api.refresh_authority(org))
--     instead of a materialized view (which Citus cannot distribute); its rows are copied
--     over, so authority scores survive the upgrade. No caller role reads it: forced
--     row-level security with a deny-all policy, read through data._authority.

-- Bindings -------------------------------------------------------------------------
drop table data.principal_bindings;
drop function if exists data._standby_binding(text);
drop function if exists data._standby_signature(text, text, text);
comment on table data.binding_keys
    is 'The key that signs principal bindings (one row; no caller role may read it; a reference table on Citus).';

-- document_versions.org_id ---------------------------------------------------------
alter table data.document_versions add column org_id text;
update data.document_versions v set org_id = d.org_id from data.documents d where d.doc_id = v.doc_id;
alter table data.document_versions alter column org_id set not null;
comment on column data.document_versions.org_id is 'The document''s org (the tenant; Citus distributes by it).';

create function data._document_version_org()
returns trigger
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
    owner_org text;
begin
    select d.org_id into owner_org from data.documents d where d.doc_id = new.doc_id;
    if new.org_id is null then
        new.org_id := owner_org;
    elsif owner_org is not null and new.org_id <> owner_org then
        raise exception 'document % belongs to org %, not %', new.doc_id, owner_org, new.org_id
            using errcode = '23514';
    end if;
    return new;
end
$$;
comment on function data._document_version_org()
    is 'A document version''s org is its document''s: filled when left out, refused when another.';
create trigger document_versions_org before insert or update of org_id, doc_id on data.document_versions
    for each row execute function data._document_version_org();

-- fragment_authority as a table ----------------------------------------------------
create table data.fragment_authority_table (
    org_id      text not null,
    fragment_id bigint not null,
    pagerank    float8 not null,
    authority   float8 not null,
    primary key (org_id, fragment_id)
);
insert into data.fragment_authority_table (org_id, fragment_id, pagerank, authority)
select a.org_id, a.fragment_id, a.pagerank, a.authority from data.fragment_authority a
where a.org_id is not null and a.fragment_id is not null;
drop materialized view data.fragment_authority;
alter table data.fragment_authority_table rename to fragment_authority;
alter index data.fragment_authority_table_pkey rename to fragment_authority_pkey;
comment on table data.fragment_authority
    is 'Citation PageRank per fragment (damping 0.85), per scope class, normalised to [0, 1]; refreshed per org by api.refresh_authority; no caller role may select it: read through data._authority.';
alter table data.fragment_authority enable row level security;
alter table data.fragment_authority force row level security;

-- Signatures that change (sql/functions creates them again): PageRank and its refresh
-- take an org (null: every org, one after the other).
drop function if exists api.refresh_authority();
drop function if exists data._citation_pagerank(float8, int);

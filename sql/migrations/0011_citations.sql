-- 0011_citations: the citation graph and its authority (R-RANK-1). docs/adr/0013.
--
--   * data.documents.link_keys: the keys a reference may name a document by (its path,
--     the dotted module paths of a code file and of its folder, an ADR's number), from
--     its path alone (data._document_keys), indexed so a new document finds the
--     references that were waiting for it.
--   * data.fragment_links: the references each fragment makes (app/ingest/references.py),
--     resolved to a document and a fragment when the target is known, kept unresolved
--     otherwise (they resolve when the target arrives); under forced row-level security.
--   * data.fragment_authority: a materialized view of citation PageRank per scope class
--     (sql/functions/47_authority.sql). No caller role may select it: it has no
--     row-level security; api.retrieve_candidates reads it through a definer helper.
--   * data.authority_refreshes: when the view was last refreshed (no tenant data).
--   * api.retrieve_candidates and api.retrieve gain an authority column: dropped here,
--     created again by sql/functions.

-- data._document_keys: what a reference may name a document by. Immutable (it reads the
-- path only): it computes a stored column. Defined here, not in sql/functions, so that
-- re-applying functions never changes the keys of stored rows behind their index.
create function data._document_keys(p_path text)
returns text[]
language sql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
    with parts as (
        select string_to_array(regexp_replace(p_path, '\.[A-Za-z0-9]+$', ''), '/') as mod,
               string_to_array(p_path, '/') as segs
    ), trimmed as (
        -- A package's own file (__init__.py, index.js, mod.rs) names its folder.
        select case when mod[cardinality(mod)] in ('__init__', 'index', 'mod') and cardinality(mod) > 1
                    then mod[1:cardinality(mod) - 1] else mod end as mod,
               segs[1:cardinality(segs) - 1] as dir,
               segs[cardinality(segs)] as file
        from parts
    )
    select array['path:' || p_path]
           || array(select 'module:' || array_to_string(t.mod[i:], '.')
                    from generate_series(1, cardinality(t.mod)) i where p_path ~ '\.[A-Za-z0-9]+$')
           || array(select 'package:' || array_to_string(t.dir[i:], '.')
                    from generate_series(1, cardinality(t.dir)) i)
           || coalesce(array(select 'adr:' || ltrim(m[1], '0')
                             from regexp_match(t.file, '^(?:adr[-_ ]?)?([0-9]{1,6})[-_.]', 'i') m
                             where p_path ~* '(adr|decision)' and ltrim(m[1], '0') <> ''), '{}')
    from trimmed t
$$;
comment on function data._document_keys(text)
    is 'Keys a reference may name a document by: path:P, module:a.b (dotted suffixes of a code path), package:a.b (of its folder), adr:N (an ADR file''s number).';

alter table data.documents add column link_keys text[] generated always as (data._document_keys(path)) stored;
comment on column data.documents.link_keys is 'Keys references name this document by (data._document_keys): how a waiting reference finds it.';
create index documents_link_keys on data.documents using gin (link_keys);

create table data.fragment_links (
    link_id            bigint generated always as identity primary key,
    org_id             text not null references data.orgs on delete cascade,
    -- The citing fragment and its scope labels (fixed for a fragment), for the policy.
    fragment_id        bigint not null,
    repo_id            text,
    persona_id         text,
    session_id         text,
    -- The document whose ingestion recorded the reference (relative paths are its).
    doc_id             bigint not null references data.documents on delete cascade,
    link_type          text not null check (link_type in ('link', 'url', 'import', 'symbol', 'adr', 'metadata')),
    target             text not null check (length(target) between 1 and 2048),
    target_key         text not null check (length(target_key) between 1 and 2048),
    target_name        text,
    target_anchor      text,
    target_repo        text,
    -- Resolution: null while the target is unknown. The target's labels, for the policy.
    target_doc_id      bigint references data.documents on delete set null,
    target_fragment_id bigint,
    target_repo_id     text,
    target_persona_id  text,
    target_session_id  text,
    resolved_at        timestamptz,
    created_at         timestamptz not null default now(),
    foreign key (fragment_id, org_id) references data.fragments on delete cascade
);
create unique index fragment_links_identity on data.fragment_links
    (fragment_id, doc_id, link_type, target_key, coalesce(target_name, ''), coalesce(target_anchor, ''),
     coalesce(target_repo, ''));
create index fragment_links_key on data.fragment_links (org_id, target_key);
create index fragment_links_target_doc on data.fragment_links (target_doc_id);
create index fragment_links_doc on data.fragment_links (doc_id);
comment on table data.fragment_links is 'References a fragment makes (links, URLs, imports, symbol uses, ADR mentions, metadata links), resolved to the fragment they cite when known; the edges of citation PageRank.';
comment on column data.fragment_links.target is 'The reference as written (a link, URL, module, name, ADR mention).';
comment on column data.fragment_links.target_key is 'What it names, as a key of data.documents.link_keys (path:P, module:M, package:P, adr:N).';
comment on column data.fragment_links.target_name is 'A code name the target document must define (the cited fragment is its definition).';
comment on column data.fragment_links.target_fragment_id is 'The cited fragment (null: unresolved, kept until its target arrives).';
alter table data.fragment_links enable row level security;
alter table data.fragment_links force row level security;

create table data.authority_refreshes (
    refreshed_at timestamptz primary key,
    duration_ms  float8 not null,
    scored       int not null
);
comment on table data.authority_refreshes is 'Each refresh of data.fragment_authority: when, how long, how many fragments scored (no tenant data).';

-- Replaced by sql/functions/47_authority.sql (the view needs a definition to exist).
create function data._citation_pagerank(p_damping float8 default 0.85, p_iterations int default 30)
returns table (org_id text, fragment_id bigint, pagerank float8, authority float8)
language sql stable
set search_path = pg_catalog, pg_temp
as $$ select null::text, null::bigint, null::float8, null::float8 where false $$;

create materialized view data.fragment_authority as
    select r.org_id, r.fragment_id, r.pagerank, r.authority from data._citation_pagerank() r;
create unique index fragment_authority_key on data.fragment_authority (org_id, fragment_id);
comment on materialized view data.fragment_authority is 'Citation PageRank per fragment (damping 0.85), per scope class, normalised to [0, 1]; no caller role may select it (no row-level security on a materialized view): read through api.retrieve_candidates.';

drop function if exists api.retrieve(text, text, text, text, text, int, int, jsonb);
drop function if exists api.retrieve_candidates(text, text, jsonb, text, text, text, int, int, int, jsonb, text, text[], timestamptz, timestamptz, text);

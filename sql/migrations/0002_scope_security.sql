-- 0002_scope_security: principals with grants and API keys, tenants as list
-- partitions of the fragment, embedding and posting tables, BM25 statistics kept per
-- scope group (so a principal's scores count only what it may read), and row-level
-- security switched on and forced on every table that holds tenant data. The policies
-- themselves live in sql/policies (re-applied on every migrate).
--
-- Runs as the migrator: a superuser (it creates the group roles below; the functions
-- it owns resolve principals and maintain statistics past row-level security).

-- Group roles (cluster-wide, created once). Logins join one of them; none owns tables.
do $$
declare
    r text;
begin
    foreach r in array array['contexts_service', 'contexts_analyst', 'contexts_auditor'] loop
        if not exists (select 1 from pg_roles where rolname = r) then
            execute format('create role %I nologin', r);
        end if;
    end loop;
end
$$;
comment on role contexts_service is 'Contexts API service: reads through row-level security, writes through api functions.';
comment on role contexts_analyst is 'Read-only SQL access, filtered by the grants of the principal mapped to the login.';
comment on role contexts_auditor is 'Reads retrieval traces of the orgs its principal holds an audit grant on.';

-- Orgs get a number: partition names are built from it, never from user text.
alter table data.orgs add column org_no int generated always as identity;
alter table data.orgs add constraint orgs_org_no_key unique (org_no);
alter table data.orgs add column session_ttl interval not null default interval '24 hours'
    constraint session_ttl_positive check (session_ttl > interval '0');
comment on column data.orgs.session_ttl is 'Lifetime of a new session; expired sessions are never returned and are purged by `contexts sessions purge`.';

-- Principals, grants, API keys ----------------------------------------------------

alter table data.principals add column db_role name;
alter table data.principals add column disabled_at timestamptz;
alter table data.principals add constraint principals_db_role_key unique (db_role);
comment on column data.principals.db_role is 'Login role mapped to this principal (analysts, auditors): its SQL sessions act as this principal.';

create table data.grants (
    org_id       text not null,
    principal_id text not null,
    scope_kind   text not null check (scope_kind in ('org', 'repo', 'persona', 'session', 'audit')),
    scope_id     text not null,
    can_write    boolean not null default false,
    created_at   timestamptz not null default now(),
    primary key (org_id, principal_id, scope_kind, scope_id),
    foreign key (org_id, principal_id) references data.principals on delete cascade,
    constraint org_grants_name_the_org check (scope_kind not in ('org', 'audit') or scope_id = org_id),
    constraint audit_is_read_only check (scope_kind <> 'audit' or not can_write)
);
comment on table data.grants is 'A principal''s ACL. org: every repo and persona of the org; repo/persona/session: that one; audit: the org''s traces.';

create table data.api_keys (
    key_id       text primary key check (key_id ~ '^[a-f0-9]{12}$'),
    org_id       text not null,
    principal_id text not null,
    key_hash     bytea not null unique check (length(key_hash) = 32),
    label        text not null default '',
    created_at   timestamptz not null default now(),
    last_used_at timestamptz,
    revoked_at   timestamptz,
    foreign key (org_id, principal_id) references data.principals on delete cascade
);
comment on table data.api_keys is 'Bearer keys: only the SHA-256 of the token is stored; a key acts as its principal until revoked.';

-- A transaction's principal: written by api.authenticate / api.bind_principal and
-- named by a random nonce in the transaction-local setting contexts.binding. A forged
-- setting matches no row of this backend and transaction, so it binds nobody.
create unlogged table data.principal_bindings (
    nonce        text primary key,
    backend_pid  int not null,
    xact_id      xid8 not null,
    org_id       text not null,
    principal_id text not null,
    created_at   timestamptz not null default now()
);
create index principal_bindings_backend on data.principal_bindings (backend_pid);
comment on table data.principal_bindings is 'Per-transaction principal bindings (unlogged, short-lived).';

-- Partitioned tenant tables ------------------------------------------------------
-- Derived statistics are dropped and rebuilt at the end from the active fragments.
drop table data.bm25_postings;
drop table data.bm25_terms;
drop table data.bm25_corpus;

alter table data.fragment_sources add column org_id text;
update data.fragment_sources s set org_id = f.org_id from data.fragments f where f.fragment_id = s.fragment_id;
alter table data.fragment_sources alter column org_id set not null;
alter table data.fragment_sources drop constraint fragment_sources_fragment_id_fkey;

alter table data.embeddings rename to embeddings_0001;
alter table data.fragments rename to fragments_0001;
alter table data.fragments_0001 rename constraint fragments_pkey to fragments_0001_pkey;
alter table data.embeddings_0001 rename constraint embeddings_pkey to embeddings_0001_pkey;
-- Index names are schema-wide: free the old ones for the new tables.
do $$
declare
    i record;
begin
    for i in select c.relname from pg_index x join pg_class c on c.oid = x.indexrelid
             join pg_class t on t.oid = x.indrelid join pg_namespace n on n.oid = t.relnamespace
             where n.nspname = 'data' and t.relname in ('fragments_0001', 'embeddings_0001')
               and not x.indisprimary loop
        execute format('drop index data.%I', i.relname);
    end loop;
end
$$;

create sequence data.fragment_id_seq as bigint;
select setval('data.fragment_id_seq', coalesce((select max(fragment_id) from data.fragments_0001), 0) + 1, false);

create table data.fragments (
    fragment_id     bigint not null default nextval('data.fragment_id_seq'),
    org_id          text not null references data.orgs on delete cascade,
    repo_id         text,
    persona_id      text,
    session_id      text,
    doc_id          bigint,
    doc_version     int,
    namespace       text not null references data.embedding_namespaces,
    kind            text not null,
    owner           text not null,
    heading_path    text[] not null default '{}',
    symbol          text,
    text            text not null,
    content_hash    text not null,
    token_count     int not null check (token_count >= 0),
    chunker_version text not null,
    simhash         bigint not null,
    simhash_band0   int generated always as (((simhash >> 48) & 65535)::int) stored,
    simhash_band1   int generated always as (((simhash >> 32) & 65535)::int) stored,
    simhash_band2   int generated always as (((simhash >> 16) & 65535)::int) stored,
    simhash_band3   int generated always as ((simhash & 65535)::int) stored,
    tsv             tsvector not null,
    active          boolean not null default true,
    created_at      timestamptz not null default now(),
    updated_at      timestamptz not null default now(),
    primary key (fragment_id, org_id),
    foreign key (doc_id, doc_version) references data.document_versions on delete set null
) partition by list (org_id);
alter sequence data.fragment_id_seq owned by data.fragments.fragment_id;
create index fragments_simhash_band0 on data.fragments (org_id, simhash_band0);
create index fragments_simhash_band1 on data.fragments (org_id, simhash_band1);
create index fragments_simhash_band2 on data.fragments (org_id, simhash_band2);
create index fragments_simhash_band3 on data.fragments (org_id, simhash_band3);
create index fragments_content_hash on data.fragments (org_id, content_hash);
create index fragments_doc on data.fragments (doc_id);
-- For analysts' own full-text queries; retrieval scores BM25 from data.bm25_postings.
create index fragments_tsv on data.fragments using gin (tsv);
comment on table data.fragments is 'Canonical fragments: one decision or one code unit, deduplicated by SimHash. One partition per org.';
comment on column data.fragments.active is 'True while at least one live document version points at the fragment.';
comment on column data.fragments.doc_id is 'Document that first produced this text (null once deleted); all sources are in fragment_sources.';
comment on column data.fragments.heading_path is 'Headings (prose) or enclosing symbols (code) above the fragment.';

create table data.embeddings (
    fragment_id bigint not null,
    model_id    int not null references data.embedding_models,
    org_id      text not null references data.orgs on delete cascade,
    -- The fragment's scope labels (fixed for a fragment), for the row-level policy.
    repo_id     text,
    persona_id  text,
    session_id  text,
    embedding   extensions.vector not null,
    created_at  timestamptz not null default now(),
    primary key (fragment_id, model_id, org_id),
    foreign key (fragment_id, org_id) references data.fragments on delete cascade
) partition by list (org_id);
create index embeddings_model_org on data.embeddings (model_id, org_id);
comment on table data.embeddings is 'Dense vectors, one per fragment and model; HNSW indexes per model and per org partition.';

-- BM25: postings per org partition; statistics per scope group -------------------

create table data.bm25_postings (
    org_id      text not null references data.orgs on delete cascade,
    term        text not null,
    fragment_id bigint not null,
    tf          int not null,
    dl          int not null,
    repo_id     text,
    persona_id  text,
    session_id  text,
    primary key (org_id, term, fragment_id) include (tf, dl, repo_id, persona_id, session_id),
    foreign key (fragment_id, org_id) references data.fragments on delete cascade
) partition by list (org_id);
create index bm25_postings_fragment on data.bm25_postings (fragment_id);
comment on table data.bm25_postings is 'Term frequencies of active fragments; the covering key serves BM25 and the scope filter without heap reads.';

-- A scope group is one combination of labels (repo, persona, session) in an org. A
-- search sums the groups its caller may read, so statistics never count a fragment
-- the caller cannot see, and another tenant's writes never move its scores.
create table data.bm25_terms (
    org_id     text not null references data.orgs on delete cascade,
    term       text not null,
    repo_id    text,
    persona_id text,
    session_id text,
    df         int not null check (df >= 0),
    constraint bm25_terms_group_key unique nulls not distinct (org_id, term, repo_id, persona_id, session_id)
);
comment on table data.bm25_terms is 'Document frequency of each term among the active fragments of one scope group.';

create table data.bm25_corpus (
    org_id         text not null references data.orgs on delete cascade,
    repo_id        text,
    persona_id     text,
    session_id     text,
    fragment_count bigint not null default 0,
    total_length   bigint not null default 0,
    constraint bm25_corpus_group_key unique nulls not distinct (org_id, repo_id, persona_id, session_id)
);
comment on table data.bm25_corpus is 'Fragment count and total length of one scope group (for idf and average length).';

-- Partitions of the orgs that exist (api.create_org makes them for new ones). This is
-- the release's own copy of the helper: a migration must replay identically later, so it
-- does not depend on sql/functions, which is re-applied (and may change) after it.
create or replace function data._create_tenant_partitions(p_org_id text)
returns void
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    no int := (select o.org_no from data.orgs o where o.org_id = p_org_id);
    t text;
begin
    if no is null then
        raise exception 'unknown org: %', p_org_id using errcode = 'P0002';
    end if;
    foreach t in array array['fragments', 'embeddings', 'bm25_postings'] loop
        if to_regclass(format('data.%I', t || '_' || no)) is null then
            execute format('create table data.%I partition of data.%I for values in (%L)', t || '_' || no, t, p_org_id);
            execute format('comment on table data.%I is %L', t || '_' || no,
                           format('Partition of data.%s for one org (data.orgs.org_no = %s).', t, no));
            -- Reached only through the parent (whose policies apply); direct access is denied.
            execute format('alter table data.%I enable row level security', t || '_' || no);
            execute format('alter table data.%I force row level security', t || '_' || no);
            execute format('create policy direct_access_denied on data.%I using (false)', t || '_' || no);
        end if;
    end loop;
end
$$;

select data._create_tenant_partitions(org_id) from data.orgs order by org_no;

insert into data.fragments (
    fragment_id, org_id, repo_id, persona_id, session_id, doc_id, doc_version, namespace, kind, owner,
    heading_path, symbol, text, content_hash, token_count, chunker_version, simhash, tsv, active,
    created_at, updated_at)
select fragment_id, org_id, repo_id, persona_id, session_id, doc_id, doc_version, namespace, kind, owner,
       heading_path, symbol, text, content_hash, token_count, chunker_version, simhash, tsv, active,
       created_at, updated_at
from data.fragments_0001;

insert into data.embeddings (fragment_id, model_id, org_id, repo_id, persona_id, session_id, embedding, created_at)
select e.fragment_id, e.model_id, e.org_id, f.repo_id, f.persona_id, f.session_id, e.embedding, e.created_at
from data.embeddings_0001 e join data.fragments_0001 f on f.fragment_id = e.fragment_id;

drop table data.embeddings_0001;
drop table data.fragments_0001 cascade;

alter table data.fragment_sources
    add constraint fragment_sources_fragment_fkey foreign key (fragment_id, org_id)
        references data.fragments (fragment_id, org_id) on delete cascade;
drop index if exists data.fragment_sources_fragment;
create index fragment_sources_fragment on data.fragment_sources (fragment_id) where retired_at is null;
create index fragment_sources_fragment_all on data.fragment_sources (fragment_id);

-- One HNSW index per model on the partitioned table: each org partition gets its own.
do $$
declare
    m record;
begin
    for m in select model_id, dims from data.embedding_models loop
        execute format(
            'create index if not exists %I on data.embeddings using hnsw ((embedding::extensions.vector(%s)) extensions.vector_cosine_ops) where model_id = %s',
            'embeddings_hnsw_model_' || m.model_id, m.dims, m.model_id);
    end loop;
end
$$;

-- Rebuild BM25 postings and group statistics from the active fragments.
insert into data.bm25_postings (org_id, term, fragment_id, tf, dl, repo_id, persona_id, session_id)
select f.org_id, t.lexeme, f.fragment_id, coalesce(array_length(t.positions, 1), 1),
       sum(coalesce(array_length(t.positions, 1), 1)) over (partition by f.fragment_id),
       f.repo_id, f.persona_id, f.session_id
from data.fragments f, unnest(f.tsv) t
where f.active;

insert into data.bm25_terms (org_id, term, repo_id, persona_id, session_id, df)
select org_id, term, repo_id, persona_id, session_id, count(*)
from data.bm25_postings group by org_id, term, repo_id, persona_id, session_id;

insert into data.bm25_corpus (org_id, repo_id, persona_id, session_id, fragment_count, total_length)
select org_id, repo_id, persona_id, session_id, count(*), sum(dl)
from (select distinct on (fragment_id) org_id, fragment_id, dl, repo_id, persona_id, session_id
      from data.bm25_postings order by fragment_id) per_fragment
group by org_id, repo_id, persona_id, session_id;

-- Row-level security on every table that holds tenant data --------------------------
do $$
declare
    t text;
begin
    foreach t in array array['orgs', 'repos', 'personas', 'sessions', 'principals', 'grants', 'api_keys',
                             'principal_bindings', 'documents', 'document_versions', 'fragments',
                             'fragment_sources', 'embeddings', 'bm25_postings', 'bm25_terms', 'bm25_corpus',
                             'retrieval_traces'] loop
        execute format('alter table data.%I enable row level security', t);
        execute format('alter table data.%I force row level security', t);
    end loop;
end
$$;

-- Signatures that change in this release (the new ones are in sql/functions).
drop function if exists api.create_org(text, text);
drop function if exists api.record_trace(text, text, text, jsonb, jsonb, jsonb, float8);
drop function if exists data._bm25_add(text, bigint, tsvector, text, text, text);
drop function if exists data._bm25_remove(text, bigint, tsvector);

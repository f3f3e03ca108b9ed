-- 0001_core: tenants, scopes, versioned documents, deduplicated fragments, BM25
-- statistics, per-namespace embeddings and retrieval traces.
-- Tables live in `data`; callers (service, analysts) go through functions in `api`.

-- pgvector lives in its own schema so every function can pin a search_path that
-- names it without trusting `public`.
create schema if not exists extensions;
do $$
begin
    if exists (select 1 from pg_extension where extname = 'vector') then
        if (select n.nspname from pg_extension e join pg_namespace n on n.oid = e.extnamespace
            where e.extname = 'vector') <> 'extensions' then
            alter extension vector set schema extensions;
        end if;
    else
        create extension vector with schema extensions;
    end if;
end
$$;

create schema if not exists data;
create schema if not exists api;
comment on schema data is 'Contexts tables. Read and write them through the api schema.';
comment on schema api is 'Contexts functions: what the service and analysts call.';

-- Tenants and scopes -------------------------------------------------------------

create table data.orgs (
    org_id       text primary key
                 constraint org_id_format check (org_id ~ '^[a-z0-9][a-z0-9_.-]{0,62}$'),
    display_name text not null default '',
    created_at   timestamptz not null default now()
);
comment on table data.orgs is 'Tenants. Every other row belongs to exactly one org.';

create table data.repos (
    org_id     text not null references data.orgs on delete cascade,
    repo_id    text not null
               constraint repo_id_format check (repo_id ~ '^[A-Za-z0-9][A-Za-z0-9_./-]{0,127}$'),
    created_at timestamptz not null default now(),
    primary key (org_id, repo_id)
);
comment on table data.repos is 'Repository scope: knowledge that inherits a repository''s access policy.';

create table data.personas (
    org_id      text not null references data.orgs on delete cascade,
    persona_id  text not null
                constraint persona_id_format check (persona_id ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
    description text not null default '',
    created_at  timestamptz not null default now(),
    primary key (org_id, persona_id)
);
comment on table data.personas is 'Persona scope, e.g. backend-sre: knowledge for one role of agent.';

create table data.sessions (
    org_id     text not null references data.orgs on delete cascade,
    session_id text not null
               constraint session_id_format check (session_id ~ '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$'),
    created_at timestamptz not null default now(),
    expires_at timestamptz,
    primary key (org_id, session_id)
);
comment on table data.sessions is 'Session scope: ephemeral notes visible only inside that session.';

create table data.principals (
    org_id       text not null references data.orgs on delete cascade,
    principal_id text not null
                 constraint principal_id_format check (principal_id ~ '^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$'),
    kind         text not null default 'agent' check (kind in ('agent', 'human', 'service')),
    display_name text not null default '',
    created_at   timestamptz not null default now(),
    primary key (org_id, principal_id)
);
comment on table data.principals is 'Who asks: agents, humans and service accounts of an org.';

-- Documents: one row per source, one version row per distinct content -----------

create table data.documents (
    doc_id          bigint generated always as identity primary key,
    org_id          text not null references data.orgs on delete cascade,
    repo_id         text,
    persona_id      text,
    session_id      text,
    path            text not null check (length(path) between 1 and 1024),
    kind            text not null check (kind ~ '^[a-z][a-z0-9-]{0,31}$'),
    current_version int not null default 0,
    created_at      timestamptz not null default now(),
    updated_at      timestamptz not null default now(),
    foreign key (org_id, repo_id) references data.repos on delete cascade,
    foreign key (org_id, persona_id) references data.personas on delete cascade,
    foreign key (org_id, session_id) references data.sessions on delete cascade
);
create unique index documents_identity on data.documents
    (org_id, coalesce(repo_id, ''), coalesce(persona_id, ''), coalesce(session_id, ''), path);
comment on table data.documents is 'Sources (files, ADRs, transcripts, agent output), identified by org, scope and path.';
comment on column data.documents.current_version is 'Version whose fragments are live; older versions are kept.';

create table data.document_versions (
    doc_id       bigint not null references data.documents on delete cascade,
    version      int not null check (version >= 1),
    content_hash text not null,
    content      text not null,
    language     text,
    author       text,
    source_ts    timestamptz,
    metadata     jsonb not null default '{}',
    created_at   timestamptz not null default now(),
    primary key (doc_id, version)
);
comment on table data.document_versions is 'Every distinct content a document has had; a new content hash makes a new version.';

-- Embedding namespaces and model generations -------------------------------------

create table data.embedding_namespaces (
    namespace   text primary key check (namespace ~ '^[a-z][a-z0-9_]{0,31}$'),
    description text not null default ''
);
insert into data.embedding_namespaces (namespace, description) values
    ('prose', 'Markdown, reStructuredText, plain text, transcripts, policies.'),
    ('code', 'Source code chunked along syntax-tree boundaries.');
comment on table data.embedding_namespaces is 'Prose and code are embedded by separate models in separate vector spaces.';

create table data.embedding_models (
    model_id   int generated always as identity primary key,
    namespace  text not null references data.embedding_namespaces,
    name       text not null,
    dims       int not null check (dims between 1 and 16000),
    generation int not null check (generation >= 1),
    status     text not null default 'active' check (status in ('active', 'shadow', 'retired')),
    created_at timestamptz not null default now(),
    unique (namespace, generation)
);
create unique index embedding_models_one_active on data.embedding_models (namespace) where status = 'active';
comment on table data.embedding_models is 'One row per (namespace, model generation); each has its own HNSW index.';

-- Fragments: the unit of retrieval ------------------------------------------------

create table data.fragments (
    fragment_id     bigint generated always as identity primary key,
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
    -- Four 16-bit bands: two SimHashes within Hamming distance 3 agree on at least one
    -- band (pigeonhole), so near-duplicate look-ups are four index probes, not a scan.
    simhash_band0   int generated always as (((simhash >> 48) & 65535)::int) stored,
    simhash_band1   int generated always as (((simhash >> 32) & 65535)::int) stored,
    simhash_band2   int generated always as (((simhash >> 16) & 65535)::int) stored,
    simhash_band3   int generated always as ((simhash & 65535)::int) stored,
    tsv             tsvector not null,
    active          boolean not null default true,
    created_at      timestamptz not null default now(),
    updated_at      timestamptz not null default now(),
    -- Provenance only: deleting that document keeps a fragment other sources still use.
    foreign key (doc_id, doc_version) references data.document_versions on delete set null
);
create index fragments_simhash_band0 on data.fragments (org_id, simhash_band0);
create index fragments_simhash_band1 on data.fragments (org_id, simhash_band1);
create index fragments_simhash_band2 on data.fragments (org_id, simhash_band2);
create index fragments_simhash_band3 on data.fragments (org_id, simhash_band3);
create index fragments_content_hash on data.fragments (org_id, content_hash);
create index fragments_doc on data.fragments (doc_id);
comment on table data.fragments is 'Canonical fragments: one decision or one code unit, deduplicated by SimHash.';
comment on column data.fragments.active is 'True while at least one live document version points at the fragment.';
comment on column data.fragments.doc_id is 'Document that first produced this text (null once deleted); all sources are in fragment_sources.';
comment on column data.fragments.heading_path is 'Headings (prose) or enclosing symbols (code) above the fragment.';

create table data.fragment_sources (
    fragment_id bigint not null references data.fragments on delete cascade,
    doc_id      bigint not null,
    doc_version int not null,
    ordinal     int not null,
    anchor      text not null,
    start_line  int not null,
    end_line    int not null,
    content_hash text not null,
    retired_at  timestamptz,
    created_at  timestamptz not null default now(),
    primary key (doc_id, doc_version, ordinal),
    foreign key (doc_id, doc_version) references data.document_versions on delete cascade
);
create index fragment_sources_fragment on data.fragment_sources (fragment_id) where retired_at is null;
comment on table data.fragment_sources is 'Where each fragment occurs: one canonical fragment, many source pointers.';
comment on column data.fragment_sources.retired_at is 'Set when a newer document version replaces this one.';
comment on column data.fragment_sources.content_hash is 'Hash of this source''s own text: equal to the fragment''s for an exact pointer, different for a near-duplicate.';

create table data.embeddings (
    fragment_id bigint not null references data.fragments on delete cascade,
    model_id    int not null references data.embedding_models,
    org_id      text not null references data.orgs on delete cascade,
    embedding   extensions.vector not null,
    created_at  timestamptz not null default now(),
    primary key (fragment_id, model_id)
);
create index embeddings_model_org on data.embeddings (model_id, org_id);
comment on table data.embeddings is 'Dense vectors, one per fragment and model; HNSW indexes are per model (partial).';

-- BM25 statistics, per org, maintained at write time ------------------------------

create table data.bm25_postings (
    org_id      text not null references data.orgs on delete cascade,
    term        text not null,
    fragment_id bigint not null references data.fragments on delete cascade,
    tf          int not null,
    dl          int not null,
    -- The fragment's scope labels, copied (they never change for a fragment) so the
    -- scope filter is answered from the index too.
    repo_id     text,
    persona_id  text,
    session_id  text,
    primary key (org_id, term, fragment_id) include (tf, dl, repo_id, persona_id, session_id)
);
create index bm25_postings_fragment on data.bm25_postings (fragment_id);
comment on table data.bm25_postings is 'Term frequencies of active fragments; the covering key serves BM25 and the scope filter without heap reads.';

create table data.bm25_terms (
    org_id text not null references data.orgs on delete cascade,
    term   text not null,
    df     int not null check (df >= 0),
    primary key (org_id, term)
);
comment on table data.bm25_terms is 'Document frequency of each term among an org''s active fragments.';

create table data.bm25_corpus (
    org_id         text primary key references data.orgs on delete cascade,
    fragment_count bigint not null default 0,
    total_length   bigint not null default 0
);
comment on table data.bm25_corpus is 'Per-org fragment count and total length (for idf and average length).';

-- Retrieval traces ---------------------------------------------------------------

create table data.retrieval_traces (
    trace_id     uuid primary key default gen_random_uuid(),
    org_id       text not null references data.orgs on delete cascade,
    principal_id text,
    query        text not null,
    request      jsonb not null,
    pipeline     jsonb not null,
    candidates   jsonb not null,
    duration_ms  float8,
    created_at   timestamptz not null default now()
);
create index retrieval_traces_org_created on data.retrieval_traces (org_id, created_at desc);
comment on table data.retrieval_traces is 'One row per retrieval: every candidate''s ranks and scores, and why it was or was not included.';

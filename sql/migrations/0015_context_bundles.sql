-- 0015_context_bundles: Contexts as named, versioned bundles of fragments, and
-- subscriptions that let another repo or another org read a bundle without a copy.
-- docs/adr/0018.
--
--   * data.contexts: a named bundle in a scope (org, repo, persona, session labels as
--     fragments carry them), created by a principal with a write grant there; retired
--     ones stay (readable for audit) but leave listings and retrieval.
--   * data.context_versions, data.context_members: a version is an immutable list of
--     fragment references (fragment id, and the document version it was cited from),
--     numbered 1, 2, ... per context; `ctx_<id>@<version>` names one.
--   * data.context_subscriptions: a grant on a bundle, made and revoked by its
--     publisher: the principals of the subscriber org (of one repo of it, or all of them)
--     read the members of the pinned version, or of the newest one (version null).
-- All four are under forced row-level security (sql/policies); members carry no foreign
-- key to data.fragments, so deleting a document never rewrites a published version.

create table data.contexts (
    context_id  bigint generated always as identity primary key,
    org_id      text not null references data.orgs on delete cascade,
    repo_id     text,
    persona_id  text,
    session_id  text,
    name        text not null constraint context_name_format check (name ~ '^[A-Za-z0-9][A-Za-z0-9_.:/ -]{0,127}$'),
    description text not null default '' check (length(description) <= 2000),
    created_by  text not null,
    created_at  timestamptz not null default clock_timestamp(),
    retired_at  timestamptz,
    retired_by  text,
    unique (context_id, org_id),
    foreign key (org_id, repo_id) references data.repos on delete cascade,
    foreign key (org_id, persona_id) references data.personas on delete cascade,
    foreign key (org_id, session_id) references data.sessions on delete cascade
);
create unique index contexts_live_name on data.contexts
    (org_id, coalesce(repo_id, ''), coalesce(persona_id, ''), coalesce(session_id, ''), name)
    where retired_at is null;
comment on table data.contexts is 'Contexts: named, versioned bundles of fragments in a scope (api.context_create, api.contexts_list); `ctx_<id>@<version>` addresses a version.';
comment on column data.contexts.created_by is 'Principal that created it (it held a write grant on the context''s scope).';
comment on column data.contexts.retired_at is 'Set by api.context_retire: out of listings and retrieval, still readable by reference (audit).';

create table data.context_versions (
    context_id     bigint not null,
    org_id         text not null,
    version        int not null check (version >= 1),
    built_from     jsonb not null default '{}',
    note           text not null default '' check (length(note) <= 2000),
    fragment_count int not null check (fragment_count >= 1),
    created_by     text not null,
    created_at     timestamptz not null default clock_timestamp(),
    primary key (context_id, version),
    foreign key (context_id, org_id) references data.contexts (context_id, org_id) on delete cascade
);
comment on table data.context_versions is 'Immutable versions of a Context: what each was built from (fragment ids, documents, path globs, a frozen query) and by whom.';

create table data.context_members (
    context_id  bigint not null,
    version     int not null,
    org_id      text not null,
    ordinal     int not null check (ordinal >= 1),
    fragment_id bigint not null,
    doc_id      bigint,
    doc_version int,
    primary key (context_id, version, fragment_id),
    unique (context_id, version, ordinal),
    foreign key (context_id, version) references data.context_versions on delete cascade
);
create index context_members_fragment on data.context_members (fragment_id);
comment on table data.context_members is 'The fragment references of a Context version, in bundle order: a fragment id and the document version it was cited from when the version was built.';
comment on column data.context_members.fragment_id is 'No foreign key: a version never changes; a fragment deleted since (its documents deleted) is simply missing when the version is read.';

create table data.context_subscriptions (
    subscription_id    bigint generated always as identity primary key,
    context_id         bigint not null,
    org_id             text not null,
    version            int,
    subscriber_org_id  text not null references data.orgs on delete cascade,
    subscriber_repo_id text constraint subscriber_repo_format
                       check (subscriber_repo_id ~ '^[A-Za-z0-9][A-Za-z0-9_./-]{0,127}$'),
    created_by         text not null,
    created_at         timestamptz not null default clock_timestamp(),
    revoked_at         timestamptz,
    revoked_by         text,
    foreign key (context_id, org_id) references data.contexts (context_id, org_id) on delete cascade,
    foreign key (context_id, version) references data.context_versions on delete cascade,
    check (revoked_at is null or revoked_at >= created_at)
);
create unique index context_subscriptions_live on data.context_subscriptions
    (context_id, coalesce(version, 0), subscriber_org_id, coalesce(subscriber_repo_id, ''))
    where revoked_at is null;
create index context_subscriptions_subscriber on data.context_subscriptions (subscriber_org_id)
    where revoked_at is null;
comment on table data.context_subscriptions is 'Grants on a Context (api.context_subscribe): the subscriber org''s principals (of subscriber_repo_id, or all of them) read the members of `version`, or of the newest version when it is null, until revoked_at. Not a copy.';
comment on column data.context_subscriptions.version is 'The version subscribed to (null: follows the newest).';
comment on column data.context_subscriptions.subscriber_repo_id is 'Only principals that may read this repo of the subscriber org (null: every principal of that org). Not checked against the subscriber''s repos: the publisher learns nothing of another org.';
comment on column data.context_subscriptions.revoked_at is 'Set by api.context_unsubscribe (publisher or subscriber); the row stays for audit.';

alter table data.contexts enable row level security;
alter table data.contexts force row level security;
alter table data.context_versions enable row level security;
alter table data.context_versions force row level security;
alter table data.context_members enable row level security;
alter table data.context_members force row level security;
alter table data.context_subscriptions enable row level security;
alter table data.context_subscriptions force row level security;

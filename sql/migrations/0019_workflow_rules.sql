-- 0019_workflow_rules: workflow rules, which bring a Context into a retrieval or a
-- session pack that names the files (or symbols) its step touches. docs/adr/0022.
--
--   * data.context_rules: in an org, optionally one repo of it, path globs and/or
--     symbol globs, and the Context version they bring (pinned, or the newest the
--     reader may read when version is null); a name saying why, who made it, an
--     optional expiry and an on/off switch. A rule only ever names a Context that the
--     readers of its scope may read (same-org Context within the scope, or a live
--     subscription of that org or repo), checked when it is made; a Context they can no
--     longer read (subscription revoked) makes the rule bring nothing.
-- Under forced row-level security (sql/policies): a rule is seen by the principals
-- whose grants cover its scope, like a fragment of that scope.

create table data.context_rules (
    rule_id        bigint generated always as identity primary key,
    org_id         text not null references data.orgs on delete cascade,
    repo_id        text,
    name           text not null constraint context_rule_name_format
                   check (name ~ '^[A-Za-z0-9][A-Za-z0-9_.:/ -]{0,127}$'),
    path_globs     text[] not null default '{}',
    symbol_globs   text[] not null default '{}',
    context_id     bigint not null,
    context_org_id text not null,
    version        int check (version >= 1),
    created_by     text not null,
    created_at     timestamptz not null default clock_timestamp(),
    expires_at     timestamptz,
    enabled        boolean not null default true,
    check (cardinality(path_globs) + cardinality(symbol_globs) between 1 and 32),
    foreign key (org_id, repo_id) references data.repos on delete cascade,
    foreign key (context_id, context_org_id) references data.contexts (context_id, org_id) on delete cascade,
    foreign key (context_id, version) references data.context_versions on delete cascade
);
create unique index context_rules_name on data.context_rules (org_id, coalesce(repo_id, ''), name);
create index context_rules_scope on data.context_rules (org_id, repo_id) where enabled;
comment on table data.context_rules is 'Workflow rules (api.rule_create): a step touching a path or symbol matching a glob brings in a Context version (docs/adr/0022).';
comment on column data.context_rules.version is 'The Context version brought (null: the newest version the reader may read).';
comment on column data.context_rules.context_org_id is 'The Context''s org: the rule''s own, or that of a publisher whose Context the rule''s org (or repo) subscribes to.';
comment on column data.context_rules.symbol_globs is 'Globs over the symbol part of a touched entry (`path#Symbol`): `*` any run of characters but a slash.';

alter table data.context_rules enable row level security;
alter table data.context_rules force row level security;

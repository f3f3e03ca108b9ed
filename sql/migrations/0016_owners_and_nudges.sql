-- 0016_owners_and_nudges: owners and staleness nudges (R-DOC-3, "owners or rot").
--
--   * data.orgs gains the org's default owner and its staleness knobs: a fragment is
--     stale when at least stale_min_retrievals retrievals returned it within
--     stale_window and its text is older than stale_after; nudges are batched per
--     nudge_period (one outbox row per fragment and period).
--   * data.documents and data.fragments say where their owner came from
--     (owner_source: document, codeowners, default, reassigned, or none when nobody
--     was named and the org has no default).
--   * data.fragment_returns: one row per fragment a retrieval returned, kept from
--     data.retrieval_traces by a trigger (sql/functions/56_owners.sql), so counting a
--     fragment's retrievals in a window is an index range scan, not a walk over every
--     trace's JSON.
--   * data.owner_reassignments: the audit of bulk reassignments (ownership is not
--     content: no document version is written).
--   * data.org_webhooks, data.nudge_outbox, data.nudge_deliveries: one webhook per org,
--     the nudges owed to it, and every delivery attempt.
--   * api.begin_document takes the owner's source: dropped here, created again by
--     sql/functions.

alter table data.orgs
    add column default_owner text
        constraint default_owner_named check (default_owner is null or length(default_owner) between 1 and 256),
    add column stale_after interval not null default interval '182 days'
        constraint stale_after_positive check (stale_after > interval '0'),
    add column stale_window interval not null default interval '90 days'
        constraint stale_window_positive check (stale_window > interval '0'),
    add column stale_min_retrievals int not null default 5
        constraint stale_min_retrievals_positive check (stale_min_retrievals >= 1),
    add column nudge_period interval not null default interval '7 days'
        constraint nudge_period_positive check (nudge_period >= interval '1 hour');
comment on column data.orgs.default_owner is 'Owner of what names none and matches no CODEOWNERS rule (R-DOC-3); null: such fragments are "unowned".';
comment on column data.orgs.stale_after is 'A fragment whose text is older than this and is often retrieved is stale (default six months).';
comment on column data.orgs.stale_window is 'How far back retrievals are counted for staleness.';
comment on column data.orgs.stale_min_retrievals is 'Retrievals within stale_window that make an old fragment "often retrieved".';
comment on column data.orgs.nudge_period is 'An owner is nudged about a stale fragment at most once per period (one outbox row per fragment and period).';

alter table data.documents
    add column owner_source text not null default 'document'
        constraint documents_owner_source_known
        check (owner_source in ('document', 'codeowners', 'default', 'reassigned', 'none'));
update data.documents set owner_source = 'none' where owner is null or owner = 'unowned';
comment on column data.documents.owner_source is 'Where the owner came from: document (front matter, metadata, --owner, request), codeowners (the repo''s CODEOWNERS), default (the org''s), reassigned (contexts owners reassign), none.';

alter table data.fragments
    add column owner_source text not null default 'document'
        constraint fragments_owner_source_known
        check (owner_source in ('document', 'codeowners', 'default', 'reassigned', 'none'));
update data.fragments set owner_source = 'none' where owner = 'unowned';
comment on column data.fragments.owner_source is 'Where the owner came from (as data.documents.owner_source).';

create table data.fragment_returns (
    org_id      text not null references data.orgs on delete cascade,
    trace_id    uuid not null references data.retrieval_traces on delete cascade,
    fragment_id bigint not null,
    returned_at timestamptz not null,
    primary key (org_id, trace_id, fragment_id)
);
create index fragment_returns_window on data.fragment_returns (org_id, returned_at) include (fragment_id);
comment on table data.fragment_returns is 'One row per fragment a retrieval returned (included in its answer), kept from data.retrieval_traces by a trigger: what staleness counts.';

insert into data.fragment_returns (org_id, trace_id, fragment_id, returned_at)
select distinct t.org_id, t.trace_id, (e ->> 'fragment_id')::bigint, t.created_at
from data.retrieval_traces t
cross join lateral jsonb_array_elements(case when jsonb_typeof(t.candidates) = 'array' then t.candidates else '[]' end) e
where jsonb_typeof(e) = 'object' and e -> 'included' = 'true'::jsonb
  and jsonb_typeof(e -> 'fragment_id') = 'number' and e ->> 'fragment_id' ~ '^[0-9]{1,18}$';

create table data.owner_reassignments (
    reassignment_id bigint generated always as identity primary key,
    org_id          text not null references data.orgs on delete cascade,
    from_owner      text not null,
    to_owner        text not null check (length(to_owner) between 1 and 256),
    repo_id         text,
    path_prefix     text,
    documents       int not null,
    fragments       int not null,
    principal_id    text not null,
    reassigned_at   timestamptz not null default now()
);
create index owner_reassignments_org on data.owner_reassignments (org_id, reassigned_at desc);
comment on table data.owner_reassignments is 'Audit of bulk owner reassignments: who moved what from whom to whom, and how much.';

create table data.org_webhooks (
    org_id     text primary key references data.orgs on delete cascade,
    url        text not null
               constraint webhook_url_http check (url ~ '^https?://[^/?#@[:space:][:cntrl:]]+([/?#][^[:space:][:cntrl:]]*)?$'
                                                  and length(url) <= 2048),
    secret     text check (secret is null or length(secret) between 16 and 256),
    enabled    boolean not null default true,
    updated_by text not null,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
);
comment on table data.org_webhooks is 'One webhook per org that receives its staleness nudges; the secret signs each delivery (HMAC-SHA256) and is never returned by a read.';

create table data.nudge_outbox (
    nudge_id        bigint generated always as identity primary key,
    org_id          text not null references data.orgs on delete cascade,
    fragment_id     bigint not null,
    owner           text not null,
    period_start    timestamptz not null,
    payload         jsonb not null,
    created_at      timestamptz not null default now(),
    attempts        int not null default 0,
    next_attempt_at timestamptz not null default now(),
    delivered_at    timestamptz,
    last_status     int,
    last_error      text,
    constraint nudge_once_per_period unique (org_id, fragment_id, period_start)
);
create index nudge_outbox_due on data.nudge_outbox (next_attempt_at) where delivered_at is null;
comment on table data.nudge_outbox is 'Nudges owed to an org''s webhook: one row per stale fragment and period (idempotent), marked delivered only after a 2xx answer.';

create table data.nudge_deliveries (
    delivery_id  bigint generated always as identity primary key,
    nudge_id     bigint not null references data.nudge_outbox on delete cascade,
    org_id       text not null references data.orgs on delete cascade,
    url          text not null,
    attempted_at timestamptz not null default now(),
    status       int,
    error        text,
    duration_ms  float8
);
create index nudge_deliveries_nudge on data.nudge_deliveries (nudge_id);
comment on table data.nudge_deliveries is 'Every attempt to deliver a nudge: when, where, the HTTP status or the error.';

do $$
declare
    t text;
begin
    foreach t in array array['fragment_returns', 'owner_reassignments', 'org_webhooks', 'nudge_outbox',
                             'nudge_deliveries'] loop
        execute format('alter table data.%I enable row level security', t);
        execute format('alter table data.%I force row level security', t);
    end loop;
end
$$;

drop function if exists api.begin_document(text, text, text, text, text, text, text, text, text, text, timestamptz, jsonb, text);

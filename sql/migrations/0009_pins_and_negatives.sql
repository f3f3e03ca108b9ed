-- 0009_pins_and_negatives: manual pins (a fragment composed first in a scope, R-RANK-1)
-- and negative fragments (anti-patterns and known traps, R-DOC-2). docs/adr/0012.
--
--   * data.fragments.negative: set when the fragment is written, from its document (kind
--     `anti-pattern`, or `"negative": true` in the version's metadata), so retrieval can
--     filter on it inside its BM25 and HNSW steps like kinds (api.add_fragments).
--   * data.pins: a fragment pinned to a scope (org, repo, persona, session labels as
--     fragments carry them), by a principal, with a reason and an optional expiry; under
--     forced row-level security with the scope rule of fragments (sql/policies).
--   * Signatures that change in this release are dropped here; sql/functions creates the
--     new ones: data._dense_hits (+ negative filter), api.retrieve_candidates (+ negatives
--     argument; negative, pin_id and pin_rank columns) and api.retrieve (same columns).

alter table data.fragments add column negative boolean not null default false;
comment on column data.fragments.negative is 'An anti-pattern or known trap (R-DOC-2): returned with negative: true, "do not do this". From the document that wrote the fragment: kind anti-pattern, or "negative": true in its metadata.';

update data.fragments f
set negative = true
where f.kind = 'anti-pattern'
   or exists (select 1 from data.document_versions v
              where v.doc_id = f.doc_id and v.version = f.doc_version and v.metadata -> 'negative' = 'true'::jsonb);

create table data.pins (
    pin_id      bigint generated always as identity primary key,
    org_id      text not null references data.orgs on delete cascade,
    repo_id     text,
    persona_id  text,
    session_id  text,
    fragment_id bigint not null,
    pinned_by   text not null,
    reason      text not null check (length(reason) between 1 and 1000),
    created_at  timestamptz not null default clock_timestamp(),
    expires_at  timestamptz,
    foreign key (fragment_id, org_id) references data.fragments (fragment_id, org_id) on delete cascade,
    foreign key (org_id, repo_id) references data.repos on delete cascade,
    foreign key (org_id, persona_id) references data.personas on delete cascade,
    foreign key (org_id, session_id) references data.sessions on delete cascade,
    check (expires_at is null or expires_at > created_at)
);
create unique index pins_identity on data.pins
    (org_id, coalesce(repo_id, ''), coalesce(persona_id, ''), coalesce(session_id, ''), fragment_id);
create index pins_fragment on data.pins (fragment_id);
comment on table data.pins is 'Manual pins: a fragment composed first, whatever its relevance, in every request that sees the pin''s scope (api.pin_add, api.pins_list).';
comment on column data.pins.pinned_by is 'Principal that pinned it (it held a write grant on the pin''s scope).';
comment on column data.pins.expires_at is 'After this time the pin is ignored (null: never).';
alter table data.pins enable row level security;
alter table data.pins force row level security;

drop function if exists data._dense_hits(text, int, int, extensions.vector, int, text, text, text, bigint[], text[], timestamptz, timestamptz);
drop function if exists api.retrieve(text, text, text, text, text, int, int, jsonb);
drop function if exists api.retrieve_candidates(text, text, jsonb, text, text, text, int, int, int, jsonb, text, text[], timestamptz, timestamptz);

-- 0010_ranking_profiles: the blended score of R-RANK-1 and its weights per persona.
-- docs/adr/0014.
--
--   * data.ranking_profiles: an org's default blend (persona_id null) or one persona's:
--     the weights of the relevance, freshness, authority, pin and persona terms, the
--     freshness half-life per document kind, and a description. A null weight or a kind
--     left out inherits (persona profile -> org default -> built-in defaults,
--     data._ranking_profile). Under forced row-level security: readable by the org's
--     principals, a persona's profile by those granted that persona (sql/policies);
--     written only through api.ranking_profile_set / api.ranking_profile_delete.
--   * data.fragments gains an index of each persona's fragments, newest first: the
--     evidence of the persona term (docs/adr/0014).
--   * Signatures that change in this release are dropped here; sql/functions creates the
--     new ones: api.retrieve_candidates and api.retrieve (+ persona_similarity and
--     profile columns).

create table data.ranking_profiles (
    org_id        text not null references data.orgs on delete cascade,
    persona_id    text,
    w_rerank      float8 check (w_rerank >= 0),
    w_freshness   float8 check (w_freshness >= 0),
    w_authority   float8 check (w_authority >= 0),
    w_pinned      float8 check (w_pinned >= 0),
    w_persona     float8 check (w_persona >= 0),
    halflife_days jsonb not null default '{}' check (jsonb_typeof(halflife_days) = 'object'),
    description   text check (length(description) <= 2000),
    updated_by    text not null,
    updated_at    timestamptz not null default clock_timestamp(),
    foreign key (org_id, persona_id) references data.personas on delete cascade
);
create unique index ranking_profiles_identity on data.ranking_profiles (org_id, coalesce(persona_id, ''));
comment on table data.ranking_profiles is 'Blend weights and freshness half-lives per kind: an org default (persona_id null) or a persona''s (R-RANK-1; api.ranking_profile_set). Null weights and absent kinds inherit.';
comment on column data.ranking_profiles.halflife_days is 'Freshness half-life in days per document kind ({"default": 90, "policy": 365}); "default" covers the kinds not named.';
comment on column data.ranking_profiles.updated_by is 'Principal that set it (it held a write grant on the org, or on the persona).';
alter table data.ranking_profiles enable row level security;
alter table data.ranking_profiles force row level security;

-- The persona term's evidence: a persona's most recently updated active fragments
-- (api.retrieve_candidates reads at most 1000 of them, only when the profile weighs it).
create index fragments_persona_recent on data.fragments (org_id, persona_id, updated_at desc, fragment_id desc)
    where persona_id is not null and active;

drop function if exists api.retrieve(text, text, text, text, text, int, int, jsonb);
drop function if exists api.retrieve_candidates(text, text, jsonb, text, text, text, int, int, int, jsonb, text, text[], timestamptz, timestamptz, text);

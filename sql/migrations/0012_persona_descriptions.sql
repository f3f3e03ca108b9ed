-- 0012_persona_descriptions: a persona's description as evidence of what it cares about
-- (R-RANK-1, the persona term). docs/adr/0014.
--
--   * data.persona_vectors: the description of a persona's ranking profile embedded with
--     each namespace's model (by the service or CLI that sets the profile; the database
--     runs no model), one row per persona and model, written only through
--     api.persona_vectors_set and dropped by api.ranking_profile_set when the description
--     changes. api.retrieve_candidates combines it with the centroid of the persona's
--     own fragments. Under forced row-level security: readable by those who may read
--     the persona (sql/policies).

create table data.persona_vectors (
    org_id      text not null,
    persona_id  text not null,
    model_id    int not null references data.embedding_models on delete cascade,
    description text not null,
    embedding   extensions.vector not null,
    updated_by  text not null,
    updated_at  timestamptz not null default clock_timestamp(),
    primary key (org_id, persona_id, model_id),
    foreign key (org_id, persona_id) references data.personas on delete cascade
);
comment on table data.persona_vectors is 'The description of a persona''s ranking profile embedded with each model (unit vectors): evidence of what the persona cares about, with its own fragments (api.persona_vectors_set; docs/adr/0014).';
comment on column data.persona_vectors.description is 'The text embedded: the persona profile''s description when the vector was written.';
alter table data.persona_vectors enable row level security;
alter table data.persona_vectors force row level security;

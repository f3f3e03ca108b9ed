-- Knowledge health: who owns what, how old it is, what is duplicated, what churns.
-- Security invoker views over the data tables: row-level security shows each caller
-- exactly the fragments and documents its grants allow, as in a plain `select`.

-- api.fragments_by_owner: active fragments per org, owner, kind and age (time since the
-- fragment was last written), in buckets.
create or replace view api.fragments_by_owner with (security_invoker = true) as
with aged as (
    select f.org_id, f.owner, f.kind, f.namespace, f.token_count, f.updated_at,
           case when f.updated_at > now() - interval '30 days' then 0
                when f.updated_at > now() - interval '90 days' then 30
                when f.updated_at > now() - interval '180 days' then 90
                when f.updated_at > now() - interval '365 days' then 180
                else 365 end as age_from_days
    from data.fragments f
    where f.active
)
select a.org_id, a.owner, a.kind, a.namespace,
       case a.age_from_days when 0 then 'under 30 days' when 30 then '30 to 90 days'
            when 90 then '90 to 180 days' when 180 then '180 to 365 days' else 'over a year' end as age,
       a.age_from_days,
       count(*) as fragments,
       sum(a.token_count) as tokens,
       min(a.updated_at) as oldest_update,
       max(a.updated_at) as newest_update
from aged a
group by a.org_id, a.owner, a.kind, a.namespace, a.age_from_days;
comment on view api.fragments_by_owner is 'Active fragments you may read per org, owner, kind, namespace and age bucket (since last written; age_from_days sorts the buckets: 0, 30, 90, 180, 365).';

-- api.near_duplicate_clusters: what deduplication collapsed. A canonical fragment with
-- several live source pointers stands for every document (version) that holds its
-- text or a near-duplicate of it (SimHash within Hamming distance 3, same scope).
create or replace view api.near_duplicate_clusters with (security_invoker = true) as
select f.fragment_id, f.org_id, f.repo_id, f.persona_id, f.session_id, f.namespace, f.kind, f.owner,
       count(*) as sources,
       count(*) filter (where s.content_hash = f.content_hash) as exact_sources,
       count(*) filter (where s.content_hash <> f.content_hash) as near_sources,
       count(distinct s.doc_id) as documents,
       array_agg(distinct d.path order by d.path) as paths
from data.fragments f
join data.fragment_sources s on s.fragment_id = f.fragment_id and s.org_id = f.org_id and s.retired_at is null
join data.documents d on d.org_id = s.org_id and d.doc_id = s.doc_id
where f.active
group by f.org_id, f.fragment_id
having count(*) > 1;
comment on view api.near_duplicate_clusters is 'Near-duplicate clusters deduplication collapsed: each canonical fragment you may read with more than one live source (exact copies and near-duplicates, Hamming distance <= 3), and the paths of their documents.';
comment on column api.near_duplicate_clusters.paths is 'Paths of the documents holding the text (those you may read).';

-- api.near_duplicate_pairs: near-duplicates deduplication did not collapse, because it
-- never collapses across scopes or namespaces (ADR 0003): pairs of active fragments
-- within Hamming distance 3 of each other. Two fragments agree on one of four 16-bit
-- SimHash bands when they are that close (pigeonhole), so each band is one equi-join.
create or replace view api.near_duplicate_pairs with (security_invoker = true) as
with banded as (
    select a.fragment_id as a_id, b.fragment_id as b_id, a.org_id
    from data.fragments a join data.fragments b
      on b.org_id = a.org_id and b.simhash_band0 = a.simhash_band0 and b.fragment_id > a.fragment_id
    where a.active and b.active
    union
    select a.fragment_id, b.fragment_id, a.org_id
    from data.fragments a join data.fragments b
      on b.org_id = a.org_id and b.simhash_band1 = a.simhash_band1 and b.fragment_id > a.fragment_id
    where a.active and b.active
    union
    select a.fragment_id, b.fragment_id, a.org_id
    from data.fragments a join data.fragments b
      on b.org_id = a.org_id and b.simhash_band2 = a.simhash_band2 and b.fragment_id > a.fragment_id
    where a.active and b.active
    union
    select a.fragment_id, b.fragment_id, a.org_id
    from data.fragments a join data.fragments b
      on b.org_id = a.org_id and b.simhash_band3 = a.simhash_band3 and b.fragment_id > a.fragment_id
    where a.active and b.active
)
select p.org_id, a.fragment_id, b.fragment_id as near_fragment_id,
       bit_count((a.simhash # b.simhash)::bit(64))::int as distance,
       case when a.namespace <> b.namespace then 'different namespace'
            when (a.repo_id, a.persona_id, a.session_id) is distinct from (b.repo_id, b.persona_id, b.session_id)
            then 'different scope'
            else 'same scope' end as why_not_collapsed,
       a.namespace, a.repo_id, a.persona_id, a.session_id,
       b.namespace as near_namespace, b.repo_id as near_repo_id, b.persona_id as near_persona_id,
       b.session_id as near_session_id
from banded p
join data.fragments a on a.fragment_id = p.a_id and a.org_id = p.org_id
join data.fragments b on b.fragment_id = p.b_id and b.org_id = p.org_id
where bit_count((a.simhash # b.simhash)::bit(64)) <= 3;
comment on view api.near_duplicate_pairs is 'Pairs of active fragments you may read within SimHash Hamming distance 3 that deduplication kept apart (another scope or namespace: it never collapses across them), e.g. a repo copying org-wide text.';

-- api.document_version_counts: versions per document (documents with the most versions
-- churn most).
create or replace view api.document_version_counts with (security_invoker = true) as
select d.doc_id, d.org_id, d.repo_id, d.persona_id, d.session_id, d.path, d.kind, d.current_version,
       count(*) as versions,
       min(v.created_at) as first_version_at,
       max(v.created_at) as last_version_at
from data.documents d
join data.document_versions v on v.org_id = d.org_id and v.doc_id = d.doc_id
-- Every column named, not the key's functional dependency (see api.document_retrievals).
group by d.doc_id, d.org_id, d.repo_id, d.persona_id, d.session_id, d.path, d.kind, d.current_version;
comment on view api.document_version_counts is 'Documents you may read with their number of stored versions and when the first and last were written. Most versions: order by versions desc.';

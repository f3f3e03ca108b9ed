-- BM25 statistics kept at write time: postings, document frequencies, corpus size.
-- Maintained by a trigger on data.fragments, so every path that activates or retires
-- a fragment keeps them exact. Postings are per org partition; document frequencies
-- and corpus size per scope group (org + repo/persona/session labels), summed at
-- query time over the groups the caller may read.

-- data._bm25_index: index fragments' terms and count them in their scope groups, all
-- at once (parallel arrays, one entry per fragment): one insert of postings, one
-- upsert per distinct (group, term) and one per group, however many fragments.
-- Upserts go in key order, as the per-fragment version's did (writers of one org also
-- hold its advisory write lock: api.begin_document, api.delete_document).
create or replace function data._bm25_index(
    p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[],
    p_repo_ids text[], p_persona_ids text[], p_session_ids text[])
returns void
language sql
set search_path = pg_catalog, extensions, pg_temp
as $$
    with terms as (
        select f.org_id, f.fragment_id, f.repo_id, f.persona_id, f.session_id, t.lexeme as term,
               coalesce(array_length(t.positions, 1), 1) as tf
        from unnest(p_org_ids, p_fragment_ids, p_tsvs, p_repo_ids, p_persona_ids, p_session_ids)
             as f(org_id, fragment_id, tsv, repo_id, persona_id, session_id),
             unnest(f.tsv) as t
    ), sized as materialized (
        select terms.*, (sum(tf) over (partition by org_id, fragment_id))::int as dl from terms
    ), postings as (
        insert into data.bm25_postings (org_id, term, fragment_id, tf, dl, repo_id, persona_id, session_id)
        select org_id, term, fragment_id, tf, dl, repo_id, persona_id, session_id from sized
        order by org_id, term, fragment_id
    ), df as (
        insert into data.bm25_terms as s (org_id, term, repo_id, persona_id, session_id, df)
        select org_id, term, repo_id, persona_id, session_id, count(*) from sized
        group by org_id, term, repo_id, persona_id, session_id
        order by org_id, term, repo_id, persona_id, session_id
        on conflict (org_id, term, repo_id, persona_id, session_id) do update set df = s.df + excluded.df
    )
    insert into data.bm25_corpus as c (org_id, repo_id, persona_id, session_id, fragment_count, total_length)
    select org_id, repo_id, persona_id, session_id, count(distinct fragment_id), sum(tf) from sized
    group by org_id, repo_id, persona_id, session_id
    order by org_id, repo_id, persona_id, session_id
    on conflict (org_id, repo_id, persona_id, session_id) do update
        set fragment_count = c.fragment_count + excluded.fragment_count,
            total_length = c.total_length + excluded.total_length
$$;
comment on function data._bm25_index(text[], bigint[], tsvector[], text[], text[], text[])
    is 'Add fragments (parallel arrays) to BM25: postings, document frequencies, corpus size.';

-- data._bm25_unindex: the exact inverse of _bm25_index, computed from the tsvectors the
-- fragments were indexed under (their postings may already be gone: an org's deletion
-- cascades to its postings before the trigger runs). Postings have no foreign key to
-- their fragment (migration 0021): this function is what removes them. A fragment
-- without terms was never indexed, never counted. Document frequencies and corpus rows
-- that reach zero go.
create or replace function data._bm25_unindex(
    p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[],
    p_repo_ids text[], p_persona_ids text[], p_session_ids text[])
returns void
language sql
set search_path = pg_catalog, extensions, pg_temp
as $$
    delete from data.bm25_postings p
    using unnest(p_org_ids, p_fragment_ids) as g(org_id, fragment_id)
    where p.org_id = g.org_id and p.fragment_id = g.fragment_id;

    update data.bm25_terms s set df = s.df - g.n
    from (select f.org_id, t.lexeme as term, f.repo_id, f.persona_id, f.session_id, count(*) as n
          from unnest(p_org_ids, p_tsvs, p_repo_ids, p_persona_ids, p_session_ids)
               as f(org_id, tsv, repo_id, persona_id, session_id),
               unnest(f.tsv) as t
          group by 1, 2, 3, 4, 5) g
    where s.org_id = g.org_id and s.term = g.term and s.repo_id is not distinct from g.repo_id
      and s.persona_id is not distinct from g.persona_id and s.session_id is not distinct from g.session_id;

    delete from data.bm25_terms s
    using (select distinct f.org_id, t.lexeme as term, f.repo_id, f.persona_id, f.session_id
           from unnest(p_org_ids, p_tsvs, p_repo_ids, p_persona_ids, p_session_ids)
                as f(org_id, tsv, repo_id, persona_id, session_id),
                unnest(f.tsv) as t) g
    where s.df <= 0 and s.org_id = g.org_id and s.term = g.term and s.repo_id is not distinct from g.repo_id
      and s.persona_id is not distinct from g.persona_id and s.session_id is not distinct from g.session_id;

    update data.bm25_corpus c set fragment_count = c.fragment_count - g.n, total_length = c.total_length - g.len
    from (select f.org_id, f.repo_id, f.persona_id, f.session_id,
                 count(distinct f.fragment_id) as n, sum(coalesce(array_length(t.positions, 1), 1)) as len
          from unnest(p_org_ids, p_fragment_ids, p_tsvs, p_repo_ids, p_persona_ids, p_session_ids)
               as f(org_id, fragment_id, tsv, repo_id, persona_id, session_id),
               unnest(f.tsv) as t
          group by 1, 2, 3, 4) g
    where c.org_id = g.org_id and c.repo_id is not distinct from g.repo_id
      and c.persona_id is not distinct from g.persona_id and c.session_id is not distinct from g.session_id;

    delete from data.bm25_corpus c
    using unnest(p_org_ids, p_repo_ids, p_persona_ids, p_session_ids) as g(org_id, repo_id, persona_id, session_id)
    where c.fragment_count <= 0 and c.org_id = g.org_id and c.repo_id is not distinct from g.repo_id
      and c.persona_id is not distinct from g.persona_id and c.session_id is not distinct from g.session_id;
$$;
comment on function data._bm25_unindex(text[], bigint[], tsvector[], text[], text[], text[])
    is 'Remove fragments (parallel arrays) from BM25: the exact inverse of data._bm25_index.';

-- data._bm25_on_fragment_change: keep statistics equal to the set of active fragments,
-- once per statement over its transition tables (a document's or a retirement's
-- fragments together): what leaves BM25 first (a fragment retired, or re-indexed under
-- a new tsvector), then what enters it. Statement triggers of a partitioned table fire
-- for statements on it, not on one of its partitions: every writer goes through
-- data.fragments.
create or replace function data._bm25_on_fragment_change()
returns trigger
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    -- Leaving (o_) and entering (n_) BM25: parallel arrays, one entry per fragment.
    o_orgs text[]; o_ids bigint[]; o_tsvs tsvector[]; o_repos text[]; o_personas text[]; o_sessions text[];
    n_orgs text[]; n_ids bigint[]; n_tsvs tsvector[]; n_repos text[]; n_personas text[]; n_sessions text[];
begin
    if tg_op = 'DELETE' then
        select array_agg(o.org_id), array_agg(o.fragment_id), array_agg(o.tsv),
               array_agg(o.repo_id), array_agg(o.persona_id), array_agg(o.session_id)
        into o_orgs, o_ids, o_tsvs, o_repos, o_personas, o_sessions
        from old_fragments o where o.active;
    elsif tg_op = 'UPDATE' then
        -- Per row: `active` changed, or the text an active fragment is indexed under did.
        select array_agg(o.org_id), array_agg(o.fragment_id), array_agg(o.tsv),
               array_agg(o.repo_id), array_agg(o.persona_id), array_agg(o.session_id)
        into o_orgs, o_ids, o_tsvs, o_repos, o_personas, o_sessions
        from old_fragments o join new_fragments n on n.fragment_id = o.fragment_id and n.org_id = o.org_id
        where o.active and (not n.active or o.tsv is distinct from n.tsv);
        select array_agg(n.org_id), array_agg(n.fragment_id), array_agg(n.tsv),
               array_agg(n.repo_id), array_agg(n.persona_id), array_agg(n.session_id)
        into n_orgs, n_ids, n_tsvs, n_repos, n_personas, n_sessions
        from old_fragments o join new_fragments n on n.fragment_id = o.fragment_id and n.org_id = o.org_id
        where n.active and (not o.active or o.tsv is distinct from n.tsv);
    else
        select array_agg(n.org_id), array_agg(n.fragment_id), array_agg(n.tsv),
               array_agg(n.repo_id), array_agg(n.persona_id), array_agg(n.session_id)
        into n_orgs, n_ids, n_tsvs, n_repos, n_personas, n_sessions
        from new_fragments n where n.active;
    end if;
    if o_ids is not null then
        perform data._bm25_unindex(o_orgs, o_ids, o_tsvs, o_repos, o_personas, o_sessions);
    end if;
    if n_ids is not null then
        perform data._bm25_index(n_orgs, n_ids, n_tsvs, n_repos, n_personas, n_sessions);
    end if;
    return null;
end
$$;

create or replace trigger fragments_bm25_insert
    after insert on data.fragments
    referencing new table as new_fragments
    for each statement
    execute function data._bm25_on_fragment_change();

create or replace trigger fragments_bm25_update
    after update on data.fragments
    referencing old table as old_fragments new table as new_fragments
    for each statement
    execute function data._bm25_on_fragment_change();

create or replace trigger fragments_bm25_delete
    after delete on data.fragments
    referencing old table as old_fragments
    for each statement
    execute function data._bm25_on_fragment_change();

-- api.lexical_tsvector: how text becomes BM25 terms, for fragments and queries alike.
-- The default parser reads `module.func`, `a/b/c` and `x::y` as one host or path
-- token, which hides identifiers inside code: those separators become spaces first.
create or replace function api.lexical_tsvector(p_text text)
returns tsvector
language sql immutable parallel safe
set search_path = pg_catalog, extensions, pg_temp
as $$
    select to_tsvector('english'::regconfig, regexp_replace(coalesce(p_text, ''), '[.:/\\@#$=<>]+', ' ', 'g'))
$$;
comment on function api.lexical_tsvector(text) is 'Terms of a text for BM25: english configuration, code separators split.';

-- api.lexical_document: the tsvector a fragment is indexed under (heading at weight A).
create or replace function api.lexical_document(p_heading text, p_body text)
returns tsvector
language sql immutable parallel safe
set search_path = pg_catalog, extensions, pg_temp
as $$
    select setweight(api.lexical_tsvector(p_heading), 'A') || api.lexical_tsvector(p_body)
$$;
comment on function api.lexical_document(text, text) is 'tsvector of a fragment: heading (weight A) and body.';

-- data._bm25_scores: Okapi BM25 of the fragments matching a query within a scope (all
-- of them, or only p_fragment_ids), the one place the formula lives.
-- idf = ln(1 + (N - df + 0.5) / (df + 0.5)); tf saturates with k1; length is
-- normalised by b against the average fragment length. N, df and the average length
-- are summed over the scope groups in the requested scope that row-level security
-- lets the caller read: a fragment the caller cannot see is never counted. Callers
-- check the requested scope first.
create or replace function data._bm25_scores(
    p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text,
    p_fragment_ids bigint[], p_k1 float8, p_b float8)
returns table (fragment_id bigint, score float8)
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
    with corpus as materialized (
        select sum(c.fragment_count)::float8 as n,
               sum(c.total_length)::float8 / greatest(sum(c.fragment_count), 1)::float8 as avgdl
        from data.bm25_corpus c
        where c.org_id = p_org_id
          and data._in_scope(c.repo_id, c.persona_id, c.session_id, p_repo_id, p_persona_id, p_session_id)
        having sum(c.fragment_count) > 0
    ), query_terms as materialized (
        select distinct t.lexeme as term
        from unnest(api.lexical_tsvector(p_query)) as t
    ), weighted as materialized (
        -- `= any(array(...))`: an index condition on (org_id, term), one probe per term.
        select s.term, ln(1.0::float8 + (corpus.n - sum(s.df)::float8 + 0.5) / (sum(s.df)::float8 + 0.5)) as idf
        from data.bm25_terms s
        cross join corpus
        where s.org_id = p_org_id and s.term = any (array(select q.term from query_terms q))
          and s.df > 0
          and data._in_scope(s.repo_id, s.persona_id, s.session_id, p_repo_id, p_persona_id, p_session_id)
        group by s.term, corpus.n
    )
    select p.fragment_id,
           sum(w.idf * (p.tf::float8 * (p_k1 + 1.0))
               / (p.tf::float8 + p_k1 * (1.0 - p_b + p_b * p.dl::float8 / corpus.avgdl)))
    from weighted w
    cross join corpus
    -- One index scan per term. Given ids, `fragment_id = any (ids)` is an index
    -- condition in the second branch, so a common term's list is never read whole: a
    -- join of the terms with the postings (or an `ids is null or ...` test) let the
    -- cached plan read it (100 ids at 100k fragments: 224 ms instead of a few). Postings
    -- exist only for active fragments (the trigger keeps it so) and carry their scope
    -- labels: no heap access to data.fragments at all.
    cross join lateral (
        select p.fragment_id, p.tf, p.dl
        from data.bm25_postings p
        where p_fragment_ids is null and p.org_id = p_org_id and p.term = w.term
          and data._in_scope(p.repo_id, p.persona_id, p.session_id, p_repo_id, p_persona_id, p_session_id)
        union all
        select p.fragment_id, p.tf, p.dl
        from data.bm25_postings p
        where p_fragment_ids is not null and p.org_id = p_org_id and p.term = w.term
          and p.fragment_id = any (p_fragment_ids)
          and data._in_scope(p.repo_id, p.persona_id, p.session_id, p_repo_id, p_persona_id, p_session_id)
        offset 0) p
    group by p.fragment_id
$$;

-- api.search_lexical: Okapi BM25 top-k over an org's fragments within a scope.
create or replace function api.search_lexical(
    p_org_id text,
    p_query text,
    p_k int default 100,
    p_repo_id text default null,
    p_persona_id text default null,
    p_session_id text default null,
    p_k1 float8 default 1.2,
    p_b float8 default 0.75)
returns table (fragment_id bigint, score float8, rank int)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    if p_k is null or p_k < 0 then
        raise exception 'k must be zero or more' using errcode = '22023';
    end if;
    return query
    select s.fragment_id, s.score, s.rank::int
    from data._bm25_top(p_org_id, p_query, p_repo_id, p_persona_id, p_session_id, null, p_k,
                        p_k1 => p_k1, p_b => p_b) with ordinality as s(fragment_id, score, rank)
    order by s.rank;
end
$$;
comment on function api.search_lexical(text, text, int, text, text, text, float8, float8)
    is 'BM25 top-k (k1=1.2, b=0.75) over the fragments in scope, from the statistics of the scope groups the caller may read.';

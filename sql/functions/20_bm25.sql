-- BM25 statistics kept at write time: postings, document frequencies, corpus size.
-- Maintained by a trigger on data.fragments, so every path that activates or retires
-- a fragment keeps them exact. Postings are per org partition; document frequencies
-- and corpus size per scope group (org + repo/persona/session labels), summed at
-- query time over the groups the caller may read.

-- data._bm25_add: index one fragment's terms and count it in its scope group.
create or replace function data._bm25_add(
    p_org_id text, p_fragment_id bigint, p_tsv tsvector,
    p_repo_id text, p_persona_id text, p_session_id text)
returns void
language sql
set search_path = pg_catalog, extensions, pg_temp
as $$
    with terms as (
        select t.lexeme as term, coalesce(array_length(t.positions, 1), 1) as tf
        from unnest(p_tsv) as t
    ), sized as (
        select term, tf, (sum(tf) over ())::int as dl from terms
    ), postings as (
        insert into data.bm25_postings (org_id, term, fragment_id, tf, dl, repo_id, persona_id, session_id)
        select p_org_id, term, p_fragment_id, tf, dl, p_repo_id, p_persona_id, p_session_id from sized
        returning term, dl
    ), df as (
        insert into data.bm25_terms as s (org_id, term, repo_id, persona_id, session_id, df)
        select p_org_id, term, p_repo_id, p_persona_id, p_session_id, 1 from postings order by term
        on conflict (org_id, term, repo_id, persona_id, session_id) do update set df = s.df + 1
    )
    insert into data.bm25_corpus as c (org_id, repo_id, persona_id, session_id, fragment_count, total_length)
    select p_org_id, p_repo_id, p_persona_id, p_session_id, 1, max(dl) from postings having count(*) > 0
    on conflict (org_id, repo_id, persona_id, session_id) do update
        set fragment_count = c.fragment_count + 1, total_length = c.total_length + excluded.total_length
$$;

-- data._bm25_remove: the exact inverse of _bm25_add, computed from the tsvector the
-- fragment was indexed under (its postings may already be gone: on delete, the foreign
-- key's cascade runs before this trigger).
create or replace function data._bm25_remove(
    p_org_id text, p_fragment_id bigint, p_tsv tsvector,
    p_repo_id text, p_persona_id text, p_session_id text)
returns void
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    removed_length int;
begin
    select sum(coalesce(array_length(t.positions, 1), 1)) into removed_length from unnest(p_tsv) as t;
    if removed_length is null then
        return;  -- no terms: never indexed, never counted
    end if;
    delete from data.bm25_postings p where p.org_id = p_org_id and p.fragment_id = p_fragment_id;
    update data.bm25_terms s set df = s.df - 1
    where s.org_id = p_org_id and s.term in (select t.lexeme from unnest(p_tsv) as t)
      and s.repo_id is not distinct from p_repo_id and s.persona_id is not distinct from p_persona_id
      and s.session_id is not distinct from p_session_id;
    delete from data.bm25_terms s
    where s.org_id = p_org_id and s.df <= 0 and s.term in (select t.lexeme from unnest(p_tsv) as t)
      and s.repo_id is not distinct from p_repo_id and s.persona_id is not distinct from p_persona_id
      and s.session_id is not distinct from p_session_id;
    update data.bm25_corpus c
    set fragment_count = c.fragment_count - 1, total_length = c.total_length - removed_length
    where c.org_id = p_org_id and c.repo_id is not distinct from p_repo_id
      and c.persona_id is not distinct from p_persona_id and c.session_id is not distinct from p_session_id;
    delete from data.bm25_corpus c
    where c.org_id = p_org_id and c.fragment_count <= 0 and c.repo_id is not distinct from p_repo_id
      and c.persona_id is not distinct from p_persona_id and c.session_id is not distinct from p_session_id;
end
$$;

-- data._bm25_on_fragment_change: keep statistics equal to the set of active fragments.
create or replace function data._bm25_on_fragment_change()
returns trigger
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    if tg_op in ('UPDATE', 'DELETE') and old.active then
        perform data._bm25_remove(old.org_id, old.fragment_id, old.tsv, old.repo_id, old.persona_id, old.session_id);
    end if;
    if tg_op in ('INSERT', 'UPDATE') and new.active then
        perform data._bm25_add(new.org_id, new.fragment_id, new.tsv, new.repo_id, new.persona_id, new.session_id);
    end if;
    return null;
end
$$;

create or replace trigger fragments_bm25_insert
    after insert on data.fragments
    for each row when (new.active)
    execute function data._bm25_on_fragment_change();

create or replace trigger fragments_bm25_update
    after update of active, tsv on data.fragments
    for each row when (old.active is distinct from new.active or (new.active and old.tsv is distinct from new.tsv))
    execute function data._bm25_on_fragment_change();

create or replace trigger fragments_bm25_delete
    after delete on data.fragments
    for each row when (old.active)
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
    join data.bm25_postings p on p.org_id = p_org_id and p.term = w.term
    cross join corpus
    -- Postings exist only for active fragments (the trigger keeps it so), and carry
    -- their scope labels: no heap access to data.fragments at all.
    where data._in_scope(p.repo_id, p.persona_id, p.session_id, p_repo_id, p_persona_id, p_session_id)
      and (p_fragment_ids is null or p.fragment_id = any (p_fragment_ids))
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

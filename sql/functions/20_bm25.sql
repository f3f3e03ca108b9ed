-- BM25 statistics kept at write time: postings, document frequencies, corpus size.
-- Maintained by a trigger on data.fragments, so every path that activates or retires
-- a fragment keeps them exact. Postings are per org partition; document frequencies
-- and corpus size per scope group (org + repo/persona/session labels), summed at
-- query time over the groups the caller may read.

-- data._bm25_index: index fragments' terms and count them in their scope groups, all
-- at once (parallel arrays, one entry per fragment): one statement, whatever the number
-- of fragments. Postings go into packed blocks (data.bm25_blocks, the contexts_bm25
-- extension) per org, term and scope group, whose id ranges stay disjoint and in order;
-- a list's last blocks may be open (fewer than 512 postings, merged later), the others
-- are sealed. Where each (group, term)'s list ended before the write decides (kept in
-- data.bm25_terms, so this needs no read of the blocks for an append):
--   * Postings above that end (fragment ids grow) make a new block, unless this is the
--     eighth write since the list's open blocks were merged or the write fills a block:
--     then the open blocks and the new postings are merged and packed again. Writing a
--     term's postings costs a row per write and a merge per eight, not a row per posting.
--   * A posting at or below it (a fragment revived under its old id, or an id a writer
--     took before another committed) joins the sealed block whose range it falls in (the
--     first block when below them all, the last sealed one when in the gap after it):
--     that block alone is packed again, as removing a posting does (data._bm25_unindex).
--     One that falls among the open blocks is merged with them.
-- Document frequencies and corpus sizes are upserted per (group, term) and per group, in
-- key order (writers of one org also hold its advisory write lock: service.begin_document,
-- service.delete_document).
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
    ), fresh as materialized (
        select s.org_id, s.term, s.repo_id, s.persona_id, s.session_id,
               data._bm25_group(s.repo_id, s.persona_id, s.session_id) as scope_group,
               array_agg(s.fragment_id) as ids, array_agg(s.tf) as tfs, array_agg(s.dl) as dls,
               min(s.fragment_id) as min_id, max(s.fragment_id) as max_id, count(*) as n
        from sized s
        group by s.org_id, s.term, s.repo_id, s.persona_id, s.session_id
    ), df as (
        -- Document frequencies first; the update keeps where the list ended before this
        -- write (end_before: what RETURNING can show of the old row) and counts the writes
        -- that appended since the open blocks were merged (one appending nothing leaves
        -- the count). A (group, term) counted for the first time (xmax 0) has no block.
        insert into data.bm25_terms as s (org_id, term, repo_id, persona_id, session_id, df,
                                          list_end, end_before, appends)
        select org_id, term, repo_id, persona_id, session_id, n, max_id, 0, 0 from fresh
        order by org_id, term, repo_id, persona_id, session_id
        on conflict (org_id, term, repo_id, persona_id, session_id) do update
            set df = s.df + excluded.df,
                list_end = greatest(s.list_end, excluded.list_end),
                end_before = s.list_end,
                appends = case when excluded.list_end <= s.list_end then s.appends
                               when s.appends >= 6 or excluded.df >= 512 then 0
                               else s.appends + 1 end
        returning s.org_id, s.term, data._bm25_group(s.repo_id, s.persona_id, s.session_id) as scope_group,
                  s.xmax <> 0 as existed, s.end_before, s.appends
    ), keyed as materialized (
        select f.*, d.existed, d.end_before,
               d.existed and f.max_id > d.end_before and d.appends = 0 as merging_append,
               d.existed and f.min_id <= d.end_before as inside
        from fresh f
        join df d on d.org_id = f.org_id and d.term = f.term and d.scope_group = f.scope_group
    ), bounds as materialized (
        -- For a write with postings inside its list: where the open blocks start (0: every
        -- block is open; null: none is), read backwards from the list's end.
        select k.*,
               case when sealed.first_id is null then 0
                    else (select b.first_id from data.bm25_blocks b
                          where b.org_id = k.org_id and b.term = k.term and b.scope_group = k.scope_group
                            and b.first_id > sealed.first_id
                          order by b.first_id limit 1) end as open_from
        from keyed k
        left join lateral (select b.first_id from data.bm25_blocks b
                           where b.org_id = k.org_id and b.term = k.term and b.scope_group = k.scope_group
                             and b.sealed
                           order by b.first_id desc limit 1) sealed on true
        where k.inside
    ), inside as materialized (
        select b.org_id, b.term, b.repo_id, b.persona_id, b.session_id, b.scope_group, b.end_before,
               b.merging_append, x.id, x.tf, x.dl,
               x.id > b.end_before or coalesce(x.id >= b.open_from, false) as to_tail
        from bounds b, unnest(b.ids, b.tfs, b.dls) as x(id, tf, dl)
    ), placed as materialized (
        -- What is appended: a new block, or merged with the open blocks.
        select k.org_id, k.term, k.repo_id, k.persona_id, k.session_id, k.scope_group,
               k.merging_append as merging, k.ids, k.tfs, k.dls
        from keyed k
        where not k.inside
        union all
        select i.org_id, i.term, i.repo_id, i.persona_id, i.session_id, i.scope_group,
               bool_or(i.merging_append) or bool_or(i.id <= i.end_before), array_agg(i.id), array_agg(i.tf),
               array_agg(i.dl)
        from inside i
        where i.to_tail
        group by i.org_id, i.term, i.repo_id, i.persona_id, i.session_id, i.scope_group
    ), gone as (
        delete from data.bm25_blocks b
        using placed p
        where p.merging and b.org_id = p.org_id and b.term = p.term and b.scope_group = p.scope_group
          and not b.sealed
        returning b.org_id, b.term, b.scope_group, b.postings
    ), packed as (
        select p.org_id, p.term, p.repo_id, p.persona_id, p.session_id,
               case when g.olds is null then extensions.bm25_pack(p.ids, p.tfs, p.dls)
                    else extensions.bm25_merge(g.olds || extensions.bm25_pack(p.ids, p.tfs, p.dls)) end as blocks
        from placed p
        left join (select g.org_id, g.term, g.scope_group, array_agg(g.postings) as olds
                   from gone g group by g.org_id, g.term, g.scope_group) g
               on g.org_id = p.org_id and g.term = p.term and g.scope_group = p.scope_group
    ), local as materialized (
        -- Postings that fall among the sealed blocks, each with the block it joins: the
        -- last one starting at or before it, else the first (a running maximum over the
        -- blocks' starts and the postings in id order).
        select u.org_id, u.term, u.scope_group, u.repo_id, u.persona_id, u.session_id, u.id, u.tf, u.dl,
               coalesce(u.at, u.first) as first_id
        from (select v.*,
                     max(v.start) over (partition by v.org_id, v.term, v.scope_group order by v.id, v.is_posting
                                        rows between unbounded preceding and current row) as at,
                     min(v.start) over (partition by v.org_id, v.term, v.scope_group) as first
              from (select i.org_id, i.term, i.scope_group, i.repo_id, i.persona_id, i.session_id, i.id, i.tf, i.dl,
                           null::bigint as start, true as is_posting
                    from inside i where not i.to_tail
                    union all
                    select r.org_id, r.term, r.scope_group, null, null, null, s.first_id, null, null, s.first_id, false
                    from (select i.org_id, i.term, i.scope_group, min(i.id) as min_id, max(i.id) as max_id
                          from inside i where not i.to_tail
                          group by i.org_id, i.term, i.scope_group) r
                    cross join lateral (
                        select coalesce(
                                   (select b.first_id from data.bm25_blocks b
                                    where b.org_id = r.org_id and b.term = r.term and b.scope_group = r.scope_group
                                      and b.first_id <= r.min_id
                                    order by b.first_id desc limit 1),
                                   (select b.first_id from data.bm25_blocks b
                                    where b.org_id = r.org_id and b.term = r.term and b.scope_group = r.scope_group
                                    order by b.first_id limit 1)) as lo) l
                    cross join lateral (
                        select b.first_id from data.bm25_blocks b
                        where b.org_id = r.org_id and b.term = r.term and b.scope_group = r.scope_group
                          and b.sealed and b.first_id >= l.lo and b.first_id <= greatest(r.max_id, l.lo)) s) v) u
        where u.is_posting
    ), joined as (
        select l.org_id, l.term, l.scope_group, l.repo_id, l.persona_id, l.session_id, l.first_id,
               array_agg(l.id) as ids, array_agg(l.tf) as tfs, array_agg(l.dl) as dls
        from local l
        group by l.org_id, l.term, l.scope_group, l.repo_id, l.persona_id, l.session_id, l.first_id
    ), rejoined as (
        delete from data.bm25_blocks b
        using joined j
        where b.org_id = j.org_id and b.term = j.term and b.scope_group = j.scope_group and b.first_id = j.first_id
          and b.sealed
        returning b.org_id, b.term, b.scope_group, b.first_id, b.postings
    ), blocks as (
        insert into data.bm25_blocks (org_id, term, repo_id, persona_id, session_id, first_id, last_id,
                                      postings_count, sealed, postings)
        select p.org_id, p.term, p.repo_id, p.persona_id, p.session_id,
               extensions.bm25_block_first(b.block), extensions.bm25_block_last(b.block),
               extensions.bm25_block_count(b.block),
               b.n < cardinality(p.blocks) or extensions.bm25_block_count(b.block) >= 512, b.block
        from packed p, unnest(p.blocks) with ordinality as b(block, n)
        union all
        select j.org_id, j.term, j.repo_id, j.persona_id, j.session_id,
               extensions.bm25_block_first(b.block), extensions.bm25_block_last(b.block),
               extensions.bm25_block_count(b.block), true, b.block
        from joined j
        join rejoined r on r.org_id = j.org_id and r.term = j.term and r.scope_group = j.scope_group
                       and r.first_id = j.first_id,
             unnest(extensions.bm25_merge(array[r.postings] || extensions.bm25_pack(j.ids, j.tfs, j.dls))) as b(block)
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
    is 'Add fragments (parallel arrays) to BM25: packed postings, document frequencies, corpus size.';

-- data._bm25_unindex: the exact inverse of _bm25_index, computed from the tsvectors the
-- fragments were indexed under (their blocks may already be gone: an org's deletion
-- cascades to them before the trigger runs). Blocks have no foreign key to their
-- fragments (migration 0021, for postings then): this function is what removes their
-- postings. Each block holding a removed posting is packed again without it (its id
-- range stays, so the group's blocks stay disjoint), or goes when emptied. A fragment
-- without terms was never indexed, never counted. Document frequencies and corpus rows
-- that reach zero go.
create or replace function data._bm25_unindex(
    p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[],
    p_repo_ids text[], p_persona_ids text[], p_session_ids text[])
returns void
language sql
set search_path = pg_catalog, extensions, pg_temp
as $$
    with removed as (
        select f.org_id, t.lexeme as term, data._bm25_group(f.repo_id, f.persona_id, f.session_id) as scope_group,
               f.fragment_id
        from unnest(p_org_ids, p_fragment_ids, p_tsvs, p_repo_ids, p_persona_ids, p_session_ids)
             as f(org_id, fragment_id, tsv, repo_id, persona_id, session_id),
             unnest(f.tsv) as t
    ), grouped as (
        select r.org_id, r.term, r.scope_group, array_agg(r.fragment_id) as ids,
               min(r.fragment_id) as min_id, max(r.fragment_id) as max_id
        from removed r
        group by r.org_id, r.term, r.scope_group
    ), rewritten as materialized (
        -- Per group and term, the blocks whose range may hold a removed id: from the last
        -- one starting at or before the smallest (one backward probe) to the largest,
        -- each packed again without the removed ids; those it did not hold are left as
        -- they are.
        select b.org_id, b.term, b.scope_group, b.first_id, b.blocks
        from grouped g
        cross join lateral (
            select b.org_id, b.term, b.scope_group, b.first_id, b.postings_count,
                   extensions.bm25_merge(array[b.postings], g.ids) as blocks
            from data.bm25_blocks b
            where b.org_id = g.org_id and b.term = g.term and b.scope_group = g.scope_group
              and b.first_id <= g.max_id
              and b.first_id >= coalesce((select s.first_id from data.bm25_blocks s
                                          where s.org_id = g.org_id and s.term = g.term
                                            and s.scope_group = g.scope_group and s.first_id <= g.min_id
                                          order by s.first_id desc limit 1), g.min_id)) b
        where coalesce(extensions.bm25_block_count(b.blocks[1]), 0) <> b.postings_count
    ), kept as (
        update data.bm25_blocks b
        set postings = r.blocks[1], postings_count = extensions.bm25_block_count(r.blocks[1])
        from rewritten r
        where cardinality(r.blocks) = 1 and b.org_id = r.org_id and b.term = r.term
          and b.scope_group = r.scope_group and b.first_id = r.first_id
    )
    delete from data.bm25_blocks b
    using rewritten r
    where cardinality(r.blocks) = 0 and b.org_id = r.org_id and b.term = r.term
      and b.scope_group = r.scope_group and b.first_id = r.first_id;

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

-- api.lexical_query_terms: a query's BM25 terms (api.lexical_tsvector), each once, with how
-- often the query says it (its positions): Okapi's query term frequency, as Lucene and
-- Tantivy count a repeated term ("eigenvalue ... eigenvalues" asks for it twice). Every
-- BM25 of a query weighs a term by idf times `times` (data._bm25_statistics, the
-- Contexts' own over their bundles, the bench's bm25s reference).
create or replace function api.lexical_query_terms(p_query text)
returns table (term text, times float8)
language sql immutable parallel safe
set search_path = pg_catalog, extensions, pg_temp
as $$
    select q.lexeme, coalesce(cardinality(q.positions), 1)::float8
    from unnest(api.lexical_tsvector(p_query)) as q
$$;
comment on function api.lexical_query_terms(text) is 'BM25 terms of a query, each once, with how often the query says it.';

-- api.lexical_document: the tsvector a fragment is indexed under (heading at weight A).
create or replace function api.lexical_document(p_heading text, p_body text)
returns tsvector
language sql immutable parallel safe
set search_path = pg_catalog, extensions, pg_temp
as $$
    select setweight(api.lexical_tsvector(p_heading), 'A') || api.lexical_tsvector(p_body)
$$;
comment on function api.lexical_document(text, text) is 'tsvector of a fragment: heading (weight A) and body.';

-- data._bm25_statistics: what BM25 needs of a query within a scope, the one place it
-- is gathered. idf = ln(1 + (N - df + 0.5) / (df + 0.5)); tf saturates with k1; length
-- is normalised by b against the average fragment length. N, df and the average length
-- are summed over the scope groups in the requested scope that row-level security lets
-- the caller read: a fragment the caller cannot see is never counted. The query's terms
-- found in scope come most common first, each with its weight: its idf times how
-- often the query says the term (api.lexical_query_terms). `term_nos` and
-- `blocks` are the packed postings of those terms the caller may read (term_nos[i]
-- numbers blocks[i]'s term in `terms`), which extensions.bm25_top scores with the
-- weights (the formula lives there, in C). No term found: null terms. Callers check the
-- requested scope first.
-- Its out-parameters changed twice (the document frequencies went, the weights came):
-- a database that holds an earlier form gets this one, not "cannot change return type".
drop function if exists data._bm25_statistics(text, text, text, text, text);
create or replace function data._bm25_statistics(
    p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text,
    out n float8, out avgdl float8, out terms text[], out weights float8[],
    out term_nos int[], out blocks bytea[])
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    select sum(c.fragment_count)::float8,
           sum(c.total_length)::float8 / greatest(sum(c.fragment_count), 1)::float8
      into n, avgdl
    from data.bm25_corpus c
    where c.org_id = p_org_id
      and data._in_scope(c.repo_id, c.persona_id, c.session_id, p_repo_id, p_persona_id, p_session_id)
    having sum(c.fragment_count) > 0;
    if n is null then
        return;
    end if;
    with said as (select * from api.lexical_query_terms(p_query))
    select array_agg(t.term order by t.idf, t.term), array_agg(t.idf * q.times order by t.idf, t.term)
      into terms, weights
    from (select s.term,
                 ln(1.0::float8 + (n - sum(s.df)::float8 + 0.5) / (sum(s.df)::float8 + 0.5)) as idf
          from data.bm25_terms s
          where s.org_id = p_org_id
            and s.term = any (array(select q.term from said q))
            and s.df > 0
            and data._in_scope(s.repo_id, s.persona_id, s.session_id, p_repo_id, p_persona_id, p_session_id)
          group by s.term) t
    join said q using (term);
    if terms is null then
        return;
    end if;
    -- One index scan per term (org, term): the blocks of every scope group, filtered by
    -- the requested scope here and by the caller's grants (row-level security).
    select coalesce(array_agg(w.no), '{}'), coalesce(array_agg(b.postings), '{}')
      into term_nos, blocks
    from unnest(terms) with ordinality as w(term, no)
    cross join lateral (select b.postings from data.bm25_blocks b
                        where b.org_id = p_org_id and b.term = w.term
                          and data._in_scope(b.repo_id, b.persona_id, b.session_id,
                                             p_repo_id, p_persona_id, p_session_id)) b;
end
$$;
comment on function data._bm25_statistics(text, text, text, text, text)
    is 'BM25 statistics of a query within a scope (N, average length, weight per term: idf times query frequency) and the blocks the caller may read.';

-- data._bm25_scores: Okapi BM25 of the fragments matching a query within a scope: all of
-- them, or only p_fragment_ids (the dense hits outside the lexical top k, a Context's
-- members, a validity window's fragments).
create or replace function data._bm25_scores(
    p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text,
    p_fragment_ids bigint[], p_k1 float8, p_b float8)
returns table (fragment_id bigint, score float8)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    st record;
begin
    if p_fragment_ids is not null and cardinality(p_fragment_ids) = 0 then
        return;
    end if;
    st := data._bm25_statistics(p_org_id, p_query, p_repo_id, p_persona_id, p_session_id);
    if st.terms is null then
        return;
    end if;
    return query
    select t.fragment_id, t.score
    from extensions.bm25_top(st.term_nos, st.blocks, st.weights,
                             coalesce(cardinality(p_fragment_ids), 2147483647), p_k1, p_b, st.avgdl,
                             p_fragment_ids) t;
end
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
                        p_k1 => p_k1, p_b => p_b) with ordinality as s(fragment_id, score, in_top, rank)
    order by s.rank;
end
$$;
comment on function api.search_lexical(text, text, int, text, text, text, float8, float8)
    is 'BM25 top-k (k1=1.2, b=0.75) over the fragments in scope, from the statistics of the scope groups the caller may read.';

-- The citation graph and authority (R-RANK-1, docs/adr/0013). Ingestion records the
-- references each fragment makes (app/ingest/references.py) in data.fragment_links;
-- they resolve to a cited fragment when their target is known, and again whenever a
-- document they name is written. data.fragment_authority holds citation PageRank,
-- computed so that a score never depends on a fragment or a link some reader of the
-- scored fragment cannot read; a table refreshed per org (links never cross orgs, so an
-- org's scores are the same computed alone), distributed by org_id on Citus.

-- data._link_targets: where each reference points, given as columns (row i of the
-- arrays is one reference: the citing fragment, its labels, the key and what narrows
-- it). Among documents with the key: the citing fragment's own scope first, then
-- broader ones (never a cited edge, but the natural target), then narrower ones; then
-- the shortest path. A code name resolves to the fragment defining it (symbol equal to
-- the name, or a member of it); an anchor to its section; else the document's first
-- live fragment. Set-based: the documents holding the keys and their live fragments are
-- read once for all the references (a popular module is named by hundreds), then each
-- takes its best pair. Only the references that resolve are returned (by row number).
-- It reads documents and fragments, never data.fragment_links: a reference resolves the
-- same before its row is written as after (data._record_links_of writes new ones
-- resolved, data._resolve_links updates stored ones).
create or replace function data._link_targets(
    p_org_ids text[], p_fragment_ids bigint[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[],
    p_keys text[], p_names text[], p_anchors text[], p_target_repos text[])
returns table (n bigint, doc_id bigint, fragment_id bigint, repo_id text, persona_id text, session_id text)
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
begin
    -- Planned for each call's references (EXECUTE: a one-shot plan), never from a cached
    -- generic one: a call resolves one reference or thousands, and the generic plan,
    -- sized for ten, nests loops over the CTEs below (2.0 s instead of 0.13 s for 6,000
    -- links, measured; PostgreSQL switches to it from a session's sixth call).
    return query execute $resolve$
        with links as materialized (
            select l.*
            from unnest($1, $2, $3, $4, $5, $6, $7, $8, $9) with ordinality
                 as l(org_id, fragment_id, repo_id, persona_id, session_id, target_key, target_name,
                      target_anchor, target_repo, n)
        ), keyed as materialized (
            -- The live documents holding any of these keys, once per key they hold: one
            -- pass over documents however many links name the same one.
            select distinct d.doc_id, d.org_id, d.repo_id, d.persona_id, d.session_id, d.path, d.current_version, k.key
            from data.documents d
            cross join lateral unnest(d.link_keys) as k(key)
            where d.org_id = any (array(select distinct l.org_id from links l))
              and d.link_keys && array(select distinct l.target_key from links l)
              and d.deleted_at is null
              and k.key in (select l.target_key from links l)
        ), live as materialized (
            -- Their current versions' live fragments, each read once.
            select s.doc_id, s.ordinal, s.anchor, f.fragment_id, f.symbol, f.repo_id, f.persona_id, f.session_id
            from (select distinct k.doc_id, k.current_version from keyed k) k
            join data.fragment_sources s on s.doc_id = k.doc_id and s.doc_version = k.current_version and s.retired_at is null
            join data.fragments f on f.fragment_id = s.fragment_id and f.org_id = s.org_id and f.active
        )
        select distinct on (l.n) l.n, d.doc_id, f.fragment_id, f.repo_id, f.persona_id, f.session_id
        from links l
        join keyed d on d.org_id = l.org_id and d.key = l.target_key
                    and (l.target_repo is null or d.repo_id = l.target_repo)
        join live f on f.doc_id = d.doc_id and f.fragment_id <> l.fragment_id
                   and (l.target_name is null or f.symbol = l.target_name
                        or starts_with(f.symbol, l.target_name || '.'))
        order by l.n,
                 (d.repo_id is not distinct from l.repo_id and d.persona_id is not distinct from l.persona_id
                  and d.session_id is not distinct from l.session_id) desc,
                 ((d.repo_id is null or d.repo_id = l.repo_id) and (d.persona_id is null or d.persona_id = l.persona_id)
                  and (d.session_id is null or d.session_id = l.session_id)) desc,
                 (d.repo_id is not null)::int + (d.persona_id is not null)::int + (d.session_id is not null)::int,
                 length(d.path), d.doc_id,
                 (l.target_anchor is not null and f.anchor = l.target_anchor) desc,
                 f.symbol is not distinct from l.target_name desc, f.ordinal
    $resolve$ using p_org_ids, p_fragment_ids, p_repo_ids, p_persona_ids, p_session_ids, p_keys, p_names,
                    p_anchors, p_target_repos;
end
$$;

-- data._resolve_links: point each of these stored references at the document and
-- fragment it names (data._link_targets), or at nothing (unresolved, kept); only the
-- rows whose target changes are written. Returns how many were.
create or replace function data._resolve_links(p_link_ids bigint[])
returns int
language sql
set search_path = pg_catalog, pg_temp
as $$
    with links as materialized (
        select array_agg(l.link_id order by l.link_id) as ids, array_agg(l.org_id order by l.link_id) as orgs,
               array_agg(l.fragment_id order by l.link_id) as fragments, array_agg(l.repo_id order by l.link_id) as repos,
               array_agg(l.persona_id order by l.link_id) as personas,
               array_agg(l.session_id order by l.link_id) as sessions,
               array_agg(l.target_key order by l.link_id) as keys, array_agg(l.target_name order by l.link_id) as names,
               array_agg(l.target_anchor order by l.link_id) as anchors,
               array_agg(l.target_repo order by l.link_id) as target_repos
        from data.fragment_links l
        where l.link_id = any (p_link_ids)
    ), targets as materialized (
        select t.* from links k,
             data._link_targets(k.orgs, k.fragments, k.repos, k.personas, k.sessions, k.keys, k.names, k.anchors,
                                k.target_repos) t
    ), resolved as materialized (
        select x.link_id, t.doc_id, t.fragment_id, t.repo_id, t.persona_id, t.session_id
        from links k
        cross join unnest(k.ids) with ordinality as x(link_id, n)
        left join targets t on t.n = x.n
    ), updated as (
        update data.fragment_links l
        set target_doc_id = r.doc_id, target_fragment_id = r.fragment_id, target_repo_id = r.repo_id,
            target_persona_id = r.persona_id, target_session_id = r.session_id,
            resolved_at = case when r.fragment_id is null then null else now() end
        from resolved r
        where l.link_id = r.link_id
          and (l.target_fragment_id is distinct from r.fragment_id or l.target_doc_id is distinct from r.doc_id)
        returning 1
    )
    select count(*)::int from updated
$$;

-- data._record_links_of: after document versions' chunks are written (service.add_documents),
-- replace the references their fragments make, written resolved, and resolve again the
-- references other documents make that name these (waiting ones resolve now; the others
-- follow their new fragments). `p_links[i]`, for document `p_doc_ids[i]`: [{fragment_id,
-- references: [{type, target, key, name, anchor, repo, evidence}]}] (evidence: a
-- supersession's grounds, app/ingest/references.py). Link ids follow the order given:
-- document, then chunk, then reference (expand_links composes what a fragment cites in
-- that order); a reference given twice is recorded once. Every link is resolved against
-- the state after all the documents' fragments are written; a new one is written with
-- its target rather than written and then updated (each resolved row written twice, with
-- every index, was about half of resolving a group's links, measured).
-- Returns how many links were written resolved or changed target.
create or replace function data._record_links_of(p_doc_ids bigint[], p_links jsonb[])
returns int
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
    refs jsonb[];
    docs bigint[];
    orgs text[];
    fragments bigint[];
    repos text[];
    personas text[];
    sessions text[];
    keys text[];
    names text[];
    anchors text[];
    target_repos text[];
    written int;
    ids bigint[];
begin
    delete from data.fragment_links l where l.doc_id = any (p_doc_ids);
    select array_agg(r.r order by x.n, c.n, r.n), array_agg(d.doc_id order by x.n, c.n, r.n),
           array_agg(d.org_id order by x.n, c.n, r.n),
           array_agg((c.c->>'fragment_id')::bigint order by x.n, c.n, r.n),
           array_agg(d.repo_id order by x.n, c.n, r.n), array_agg(d.persona_id order by x.n, c.n, r.n),
           array_agg(d.session_id order by x.n, c.n, r.n),
           array_agg(left(r.r->>'key', 2048) order by x.n, c.n, r.n), array_agg(r.r->>'name' order by x.n, c.n, r.n),
           array_agg(r.r->>'anchor' order by x.n, c.n, r.n), array_agg(r.r->>'repo' order by x.n, c.n, r.n)
      into refs, docs, orgs, fragments, repos, personas, sessions, keys, names, anchors, target_repos
    from unnest(p_doc_ids, p_links) with ordinality as x(doc_id, links, n)
    join data.documents d on d.doc_id = x.doc_id
    cross join lateral jsonb_array_elements(x.links) with ordinality as c(c, n)
    cross join lateral jsonb_array_elements(coalesce(c.c->'references', '[]')) with ordinality as r(r, n);
    with inserted as (
        insert into data.fragment_links (org_id, fragment_id, repo_id, persona_id, session_id, doc_id, link_type,
                                         target, target_key, target_name, target_anchor, target_repo, evidence,
                                         target_doc_id, target_fragment_id, target_repo_id, target_persona_id,
                                         target_session_id, resolved_at)
        select x.org_id, x.fragment_id, x.repo_id, x.persona_id, x.session_id, x.doc_id,
               x.r->>'type', left(x.r->>'target', 2048), x.target_key, x.target_name, x.target_anchor,
               x.target_repo, nullif(left(x.r->>'evidence', 2048), ''),
               t.doc_id, t.fragment_id, t.repo_id, t.persona_id, t.session_id,
               case when t.fragment_id is null then null else now() end
        -- unnest, not subscripts: an element of an array of texts is found by walking
        -- the ones before it.
        from unnest(refs, docs, orgs, fragments, repos, personas, sessions, keys, names, anchors, target_repos)
             with ordinality as x(r, doc_id, org_id, fragment_id, repo_id, persona_id, session_id, target_key,
                                  target_name, target_anchor, target_repo, n)
        left join data._link_targets(orgs, fragments, repos, personas, sessions, keys, names, anchors,
                                     target_repos) t on t.n = x.n
        order by x.n
        on conflict do nothing
        returning target_fragment_id
    )
    select count(i.target_fragment_id)::int into written from inserted i;
    -- Per document, its keys probed in fragment_links (org_id, target_key) (`offset 0`
    -- keeps the lateral subquery a nested loop: as a join, the planner hashed on org_id
    -- alone and tested every link of the org against every document's keys).
    ids := array(select l.link_id
                 from data.documents d
                 cross join lateral (select l.link_id from data.fragment_links l
                                     where l.org_id = d.org_id and l.target_key = any (d.link_keys)
                                       and not l.doc_id = any (p_doc_ids)
                                     offset 0) l
                 where d.doc_id = any (p_doc_ids)
                 union
                 select l.link_id from data.fragment_links l
                 where l.target_doc_id = any (p_doc_ids) and not l.doc_id = any (p_doc_ids));
    return written + data._resolve_links(ids);
end
$$;

-- data._record_links: data._record_links_of for one document version.
create or replace function data._record_links(p_doc data.documents, p_links jsonb)
returns int
language sql
set search_path = pg_catalog, pg_temp
as $$
    select data._record_links_of(array[p_doc.doc_id], array[p_links])
$$;

-- data._citation_pagerank: citation PageRank (damping 0.85) in the form without 1/N,
-- PR(x) = (1 - d) + d * sum over links y -> x of PR(y) / refs(y), so no score needs a
-- count of all fragments; a fixed number of Jacobi iterations from PR = 1 (a citation
-- graph is mostly acyclic: a chain of depth k is exact after k iterations).
--
-- Nothing a reader of x cannot read moves PR(x):
--   * a link y -> x counts only when every reader of x may read y: y's labels are x's
--     or fewer (org-wide, same repo, same persona, same session); by induction every
--     fragment whose score flows into x is readable by all of x's readers;
--   * an import y does not use (a module, or a name its text does not name again)
--     passes a tenth of y's share: a use from a body (a call, a name read) makes x an
--     authority, the import of a types module every file needs does not;
--   * y's share is divided by refs(y), all the references y makes (resolved or not,
--     counted or not): a number its own text gives, not how many of them land on
--     fragments some reader cannot see (the mass of the others is simply not passed on);
--   * normalisation: authority(x) = (PR(x) - (1 - d)) / the largest such gain among
--     the fragments whose labels are x's or fewer (the scope classes every reader of x
--     sees), so 1 is the most cited fragment x's readers all see, 0 an uncited one.
--
-- p_org_id: that org's fragments only (null: every org; the scores are the same, as no
-- link crosses orgs).
create or replace function data._citation_pagerank(
    p_org_id text default null, p_damping float8 default 0.85, p_iterations int default 30)
returns table (org_id text, fragment_id bigint, pagerank float8, authority float8)
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
declare
    base bigint;
    src int[];
    dst int[];
    weight float8[];
    n int;
    pr float8[];
begin
    if p_damping is null or p_damping <= 0 or p_damping >= 1 or p_iterations is null or p_iterations < 1 then
        raise exception 'damping must lie in (0, 1) and iterations be positive' using errcode = '22023';
    end if;
    -- Nodes are numbered by fragment id (id - base + 1): no join to number them.
    with refs as materialized (
        -- Every reference of a live fragment from a live document, and what it cites.
        -- An import is a use when the citing fragment names the imported name again
        -- (a small file's one fragment holds the import and the call, recorded once).
        select l.fragment_id as citing, t.fragment_id as cited,
               l.link_type = 'import'
               and (l.target_name is null
                    or regexp_count(c.text, '(?<![\w$])' || regexp_replace(l.target_name, '([^\w])', '\\\1', 'g')
                                    || '(?![\w$])') < 2) as import_only,
               count(*) over (partition by l.fragment_id) as made,
               (c.repo_id is null or c.repo_id = t.repo_id) and (c.persona_id is null or c.persona_id = t.persona_id)
               and (c.session_id is null or c.session_id = t.session_id) as counts
        from data.fragment_links l
        join data.documents d on d.org_id = l.org_id and d.doc_id = l.doc_id and d.deleted_at is null
        join data.fragments c on c.org_id = l.org_id and c.fragment_id = l.fragment_id and c.active
        left join data.fragments t on t.org_id = l.org_id and t.fragment_id = l.target_fragment_id and t.active
        where p_org_id is null or l.org_id = p_org_id
    ), links as materialized (
        -- An import states that a file needs a name, not that its body relies on it: a
        -- types module every file imports is no authority on anything. An import the
        -- citing fragment does not use passes a tenth of a use's share (docs/adr/0013,
        -- 3rd amendment).
        select r.citing, r.cited, (case when r.import_only then 0.1 else 1.0 end)::float8 / r.made as w
        from refs r where r.counts and r.cited <> r.citing
    ), bounds as (
        select least(min(k.citing), min(k.cited)) as lo, greatest(max(k.citing), max(k.cited)) as hi from links k
    )
    -- Sums run in this order (cited, then citing fragment), whatever else exists.
    select b.lo, (b.hi - b.lo + 1)::int,
           (select array_agg((k.citing - b.lo + 1)::int order by k.cited, k.citing, k.w) from links k),
           (select array_agg((k.cited - b.lo + 1)::int order by k.cited, k.citing, k.w) from links k),
           (select array_agg(k.w order by k.cited, k.citing, k.w) from links k)
      into base, n, src, dst, weight
    from bounds b;
    if base is null then
        return;
    end if;
    pr := array_fill(1.0::float8, array[n]);
    for iteration in 1..p_iterations loop
        select array_agg((1.0 - p_damping) + p_damping * coalesce(t.v, 0.0) order by g.i) into pr
        from generate_series(1, n) g(i)
        left join (select e.d, sum(pr[e.s] * e.w) as v from unnest(src, dst, weight) e(s, d, w) group by e.d) t
          on t.d = g.i;
    end loop;
    return query
    with scored as materialized (
        select f.org_id, f.fragment_id, f.repo_id, f.persona_id, f.session_id, pr[g.i] as p,
               pr[g.i] - (1.0 - p_damping) as gain
        from (select distinct x.i from unnest(src || dst) x(i)) g
        join data.fragments f on f.fragment_id = base + g.i - 1 and (p_org_id is null or f.org_id = p_org_id)
    ), classes as (
        select s.org_id, s.repo_id, s.persona_id, s.session_id, max(s.gain) as top
        from scored s group by s.org_id, s.repo_id, s.persona_id, s.session_id
    ), reach as (
        -- The largest gain among the classes each class's readers all see.
        select c.org_id, c.repo_id, c.persona_id, c.session_id, max(b.top) as top
        from classes c
        join classes b on b.org_id = c.org_id and (b.repo_id is null or b.repo_id = c.repo_id)
                      and (b.persona_id is null or b.persona_id = c.persona_id)
                      and (b.session_id is null or b.session_id = c.session_id)
        group by c.org_id, c.repo_id, c.persona_id, c.session_id
    )
    select s.org_id, s.fragment_id, s.p,
           case when r.top > 0 then least(1.0, greatest(0.0, s.gain / r.top)) else 0.0 end
    from scored s
    join reach r on r.org_id = s.org_id and r.repo_id is not distinct from s.repo_id
                and r.persona_id is not distinct from s.persona_id and r.session_id is not distinct from s.session_id;
end
$$;
comment on function data._citation_pagerank(text, float8, int)
    is 'Citation PageRank over the links whose citing fragment every reader of the cited one may read, each citer''s share divided by all the references it makes; normalised to [0, 1] among the scope classes a fragment''s readers all see. The query of data.fragment_authority.';

-- service.refresh_authority: recompute data.fragment_authority for one org (null: every org
-- that has fragments, one after the other) and record when. Readers are not blocked:
-- until this transaction commits they read the previous scores (an org's rows are
-- replaced in one transaction). Called after ingestion (debounced, off the request
-- path) and by `contexts rank refresh`; owner-only otherwise (the service's grant).
create or replace function service.refresh_authority(p_org_id text default null)
returns table (refreshed_at timestamptz, duration_ms float8, scored int)
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    started timestamptz := clock_timestamp();
    took float8;
    rows_scored int;
    org text;
begin
    if p_org_id is not null then
        perform data._require_org(p_org_id);
    end if;
    -- One refresh at a time (a second waits, then refreshes what the first did not see).
    perform pg_advisory_xact_lock(hashtext('contexts.authority'));
    for org in select o.org_id from data.orgs o where p_org_id is null or o.org_id = p_org_id order by o.org_id loop
        delete from data.fragment_authority a where a.org_id = org;
        insert into data.fragment_authority (org_id, fragment_id, pagerank, authority)
        select r.org_id, r.fragment_id, r.pagerank, r.authority from data._citation_pagerank(org) r;
    end loop;
    if p_org_id is null then
        -- Orgs that are gone leave no scores behind.
        delete from data.fragment_authority a where not exists (select 1 from data.orgs o where o.org_id = a.org_id);
    end if;
    took := extract(epoch from clock_timestamp() - started) * 1000.0;
    select count(*)::int into rows_scored from data.fragment_authority;
    delete from data.authority_refreshes;
    insert into data.authority_refreshes values (clock_timestamp(), took, rows_scored);
    return query select r.refreshed_at, r.duration_ms, r.scored from data.authority_refreshes r;
end
$$;
comment on function service.refresh_authority(text)
    is 'Recompute citation authority (data.fragment_authority) for one org or every org, and record when and how long it took.';

-- data._authority: the authority of those fragments the caller may read (the read rule
-- of data.fragments, restated: a definer reads past row-level security; each data.acl_*
-- call in a scalar subquery, once per call as in the policies), and when it was last
-- refreshed. The only way a caller reads data.fragment_authority.
create or replace function data._authority(p_org_id text, p_fragment_ids bigint[])
returns table (fragment_id bigint, authority float8, refreshed_at timestamptz)
language sql stable security definer
set search_path = pg_catalog, pg_temp
as $$
    select f.fragment_id, coalesce(a.authority, 0.0), (select max(r.refreshed_at) from data.authority_refreshes r)
    from data.fragments f
    left join data.fragment_authority a on a.org_id = f.org_id and a.fragment_id = f.fragment_id
    where f.org_id = p_org_id and f.org_id = (select data.acl_org()) and f.fragment_id = any (p_fragment_ids)
      and (f.repo_id is null or (select data.acl_org_wide()) or f.repo_id = any ((select data.acl_repos())::text[]))
      and (f.persona_id is null or (select data.acl_org_wide())
           or f.persona_id = any ((select data.acl_personas())::text[]))
      and (f.session_id is null or f.session_id = any ((select data.acl_sessions())::text[]))
$$;
comment on function data._authority(text, bigint[])
    is 'Authority of the given fragments the caller may read (0 when nothing cites them), with the time of the last refresh.';

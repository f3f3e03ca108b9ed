-- 0027_lexical_blocks: BM25 postings packed in blocks (docs/adr/0025-lexical-blocks.md).
--
-- data.bm25_postings held one row per (term, fragment): 187 bytes a posting with its
-- key, and one executor step per posting at query time (900 MB and 90 ms p50 for the
-- BM25 top 100 at 100k fragments). data.bm25_blocks holds one row per block of up to
-- 1,024 postings of one term in one scope group (the same labels the statistics are
-- kept by, so row-level security still filters whole rows), packed by the
-- contexts_bm25 extension: ids delta-encoded, tf and length as varints, a sub-block
-- directory with block-max bounds. The extension's C function scores a query's blocks
-- (exact MaxScore top k); the SQL around it decides which blocks the caller may read.
--
-- Within one (org, term, scope group) the blocks' id ranges are disjoint and in order:
-- sealed blocks (full, or the last of a merge holding 512 postings or more) first, then
-- at most a few open ones, which writes merge once they are eight
-- (sql/functions/20_bm25.sql). Existing postings are packed here, per group, in id order.
do $$
begin
    if not exists (select 1 from pg_available_extensions where name = 'contexts_bm25') then
        raise exception 'the contexts_bm25 extension is not installed on this PostgreSQL server'
            using hint = 'Build and install it from ext/contexts_bm25 (make PG_CONFIG=... install, docs/dba.md), then migrate again.',
                  errcode = '58P01';
    end if;
end
$$;
create extension if not exists contexts_bm25 with schema extensions;

-- A scope group as one value (labels never hold a space): the blocks' key compares it
-- with `=`, which an index answers, where three `is not distinct from` would not. No
-- search_path setting, so that it is inlined (built-ins only: pg_catalog is searched first).
create function data._bm25_group(p_repo_id text, p_persona_id text, p_session_id text)
returns text
language sql immutable parallel safe
as $$ select coalesce(p_repo_id, '') || ' ' || coalesce(p_persona_id, '') || ' ' || coalesce(p_session_id, '') $$;

create table data.bm25_blocks (
    org_id         text not null references data.orgs on delete cascade,
    term           text not null,
    -- The scope group (the fragments' labels, as in data.bm25_terms).
    repo_id        text,
    persona_id     text,
    session_id     text,
    scope_group    text not null generated always as (data._bm25_group(repo_id, persona_id, session_id)) stored,
    -- The id range the block was made for: later removals may narrow its postings, never
    -- widen them; a fragment's block is the last one of its group and term starting at or
    -- before its id.
    first_id       bigint not null,
    last_id        bigint not null check (last_id >= first_id),
    postings_count int not null check (postings_count > 0),
    sealed         boolean not null,
    postings       bytea not null,
    constraint bm25_blocks_key primary key (org_id, term, scope_group, first_id)
) partition by list (org_id);
-- Blocks stay below the size that would make PostgreSQL compress them or move them out
-- of line: read in place, never decompressed.
alter table data.bm25_blocks alter column postings set storage plain;
comment on table data.bm25_blocks is
    'BM25 postings of active fragments, packed per term, scope group and block of up to 1,024 (contexts_bm25).';

do $$
declare
    o record;
begin
    for o in select org_id, org_no from data.orgs order by org_no loop
        execute format('create table data.%I partition of data.bm25_blocks for values in (%L)',
                       'bm25_blocks_' || o.org_no, o.org_id);
        execute format('comment on table data.%I is %L', 'bm25_blocks_' || o.org_no,
                       format('Partition of data.bm25_blocks for one org (data.orgs.org_no = %s).', o.org_no));
        execute format('alter table data.%I enable row level security', 'bm25_blocks_' || o.org_no);
        execute format('alter table data.%I force row level security', 'bm25_blocks_' || o.org_no);
        execute format('create policy direct_access_denied on data.%I using (false)', 'bm25_blocks_' || o.org_no);
    end loop;
end
$$;
alter table data.bm25_blocks enable row level security;
alter table data.bm25_blocks force row level security;

-- A database laid out for Citus keeps every org in a DEFAULT partition (docs/scale.md).
do $$
begin
    if exists (select 1 from pg_partitioned_table pt
               where pt.partrelid = 'data.bm25_postings'::regclass and pt.partdefid <> 0) then
        create table data.bm25_blocks_default partition of data.bm25_blocks default;
    end if;
end
$$;

insert into data.bm25_blocks (org_id, term, repo_id, persona_id, session_id, first_id, last_id,
                              postings_count, sealed, postings)
select g.org_id, g.term, g.repo_id, g.persona_id, g.session_id,
       extensions.bm25_block_first(b.block), extensions.bm25_block_last(b.block),
       extensions.bm25_block_count(b.block),
       b.n < cardinality(g.blocks) or extensions.bm25_block_count(b.block) >= 512, b.block
from (select p.org_id, p.term, p.repo_id, p.persona_id, p.session_id,
             extensions.bm25_pack(array_agg(p.fragment_id), array_agg(p.tf), array_agg(p.dl)) as blocks
      from data.bm25_postings p
      group by p.org_id, p.term, p.repo_id, p.persona_id, p.session_id) g,
     unnest(g.blocks) with ordinality as b(block, n);

drop table data.bm25_postings;

-- Signatures that change (the new ones are in sql/functions): the top k returns whether
-- each row is in it (and takes the dense hits to score from the same blocks), and no
-- longer takes the number of postings from which pruning paid.
drop function if exists data._bm25_top(text, text, text, text, text, bigint[], int, text[], timestamptz,
                                       timestamptz, boolean, timestamptz, float8, float8, bigint);
-- Its postings are packed: /metrics reports the org's blocks (estimated) instead.
drop function if exists api.metrics_org_sizes();

-- What `contexts policy check` reports, read from the catalog (never from a list kept
-- by hand): every table of schema data, whether it holds tenant data, its row-level
-- security, its policies and who may read or write it. The owner/migrator calls these;
-- no caller role is granted them.

-- service.policy_report: one row per table of schema data (partitions are folded into
-- their parent: how many, and which lack forced row-level security). Every table
-- holds tenant data but the shared model registry and the eval history of the pipeline
-- (runs and figures: no tenant's rows; see migration 0008), so a new table must be
-- protected before the check passes.
create or replace function service.policy_report()
returns table (table_name text, tenant boolean, rls_enabled boolean, rls_forced boolean, policies jsonb,
               may_select text[], may_insert text[], may_update text[], may_delete text[],
               partitions int, unprotected_partitions text[])
language sql stable
set search_path = pg_catalog, pg_temp
as $$
    with tables as (
        select c.oid, c.relname::text as relname, c.relrowsecurity, c.relforcerowsecurity, c.relowner, c.relacl
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'data' and c.relkind in ('r', 'p') and not c.relispartition
    ), acl as (
        -- Table-level grants (a NULL acl is the owner's default), then column-level ones.
        select t.oid, a.privilege_type, a.grantee, false as some_columns
        from tables t, aclexplode(coalesce(t.relacl, acldefault('r', t.relowner))) a
        union
        select t.oid, a.privilege_type, a.grantee, true
        from tables t join pg_attribute att on att.attrelid = t.oid and att.attnum > 0 and not att.attisdropped,
             aclexplode(att.attacl) a
    ), holders as (
        select acl.oid, acl.privilege_type,
               array_agg(distinct case when acl.grantee = 0 then 'public' else pg_get_userbyid(acl.grantee) end
                         || case when acl.some_columns then ' (some columns)' else '' end
                         || case when acl.grantee = t.relowner then ' (owner)' else '' end) as roles
        from acl join tables t on t.oid = acl.oid
        where not (acl.some_columns and exists (
                select 1 from acl whole where whole.oid = acl.oid and whole.grantee = acl.grantee
                  and whole.privilege_type = acl.privilege_type and not whole.some_columns))
        group by acl.oid, acl.privilege_type
    )
    select t.relname,
           t.relname not in ('embedding_namespaces', 'embedding_models', 'eval_runs', 'eval_figures',
                             'authority_refreshes'),
           t.relrowsecurity,
           t.relforcerowsecurity,
           coalesce((select jsonb_agg(jsonb_build_object(
                        'name', p.polname,
                        'command', case p.polcmd when 'r' then 'select' when 'a' then 'insert' when 'w' then 'update'
                                                 when 'd' then 'delete' else 'all' end,
                        'permissive', p.polpermissive,
                        'roles', array(select case when r = 0 then 'public' else pg_get_userbyid(r) end
                                       from unnest(p.polroles) r order by 1),
                        'using', pg_get_expr(p.polqual, p.polrelid),
                        'check', pg_get_expr(p.polwithcheck, p.polrelid)) order by p.polname)
                     from pg_policy p where p.polrelid = t.oid), '[]'::jsonb),
           coalesce((select h.roles from holders h where h.oid = t.oid and h.privilege_type = 'SELECT'), '{}'),
           coalesce((select h.roles from holders h where h.oid = t.oid and h.privilege_type = 'INSERT'), '{}'),
           coalesce((select h.roles from holders h where h.oid = t.oid and h.privilege_type = 'UPDATE'), '{}'),
           coalesce((select h.roles from holders h where h.oid = t.oid and h.privilege_type = 'DELETE'), '{}'),
           (select count(*)::int from pg_inherits i where i.inhparent = t.oid),
           array(select c.relname::text from pg_inherits i join pg_class c on c.oid = i.inhrelid
                 where i.inhparent = t.oid and not (c.relrowsecurity and c.relforcerowsecurity)
                 order by 1)
    from tables t
    order by t.relname
$$;
comment on function service.policy_report() is 'Every table of schema data: tenant data or not, row-level security (enabled, forced), policies, who may select/insert/update/delete.';

-- service.policy_bypass: the roles row-level security never applies to.
create or replace function service.policy_bypass()
returns table (role_name text, superuser boolean, bypassrls boolean, can_login boolean)
language sql stable
set search_path = pg_catalog, pg_temp
as $$
    select r.rolname::text, r.rolsuper, r.rolbypassrls, r.rolcanlogin
    from pg_roles r where (r.rolsuper or r.rolbypassrls) and r.rolname !~ '^pg_'
    order by 1
$$;
comment on function service.policy_bypass() is 'Roles that bypass row-level security (superusers, BYPASSRLS).';

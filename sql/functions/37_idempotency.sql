-- Idempotent writes: a client that sends `Idempotency-Key` with a write (POST /documents,
-- POST /sessions/{id}/notes) may send it again after a timeout or a lost connection and
-- is answered what the first request did, without writing twice (docs/writes.md). The
-- response is remembered in the write's own transaction (data.idempotent_writes), per
-- org, principal and key, for 24 hours: a retry while the first is still running waits
-- for it (the org's write lock, then the key's row) and gets its answer. Both functions
-- act for the bound principal; no caller role reads the table.

-- service.idempotent_response: what an earlier request with this key answered (no row: none
-- within 24 hours). The caller compares request_hash with its own: the same key with
-- another request is the caller's mistake, not a retry.
create or replace function service.idempotent_response(p_key text)
returns table (request_hash text, status int, response jsonb, created_at timestamptz)
language plpgsql stable security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    me record;
begin
    select * into me from data._principal_or_raise();
    return query
    select w.request_hash, w.status, w.response, w.created_at
    from data.idempotent_writes w
    where w.org_id = me.org_id and w.principal_id = me.principal_id and w.idempotency_key = p_key
      and w.created_at > now() - interval '24 hours';
end
$$;
comment on function service.idempotent_response(text)
    is 'The response an earlier write of the bound principal with this Idempotency-Key got (within 24 hours), and the hash of its request.';

-- service.idempotent_record: remember a write's response under its key, in the write's
-- transaction (it commits with the write or not at all). False when the key is taken
-- (a request with it committed first, or is committing: this waits for it): the caller
-- rolls its own write back and answers with service.idempotent_response. The principal's
-- keys older than 24 hours are forgotten here.
create or replace function service.idempotent_record(p_key text, p_request_hash text, p_status int, p_response jsonb)
returns boolean
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    broken_constraint text;
    me record;
    stored int;
begin
    select * into me from data._principal_or_raise();
    delete from data.idempotent_writes w
    where w.org_id = me.org_id and w.created_at <= now() - interval '24 hours';
    insert into data.idempotent_writes (org_id, principal_id, idempotency_key, request_hash, status, response)
    values (me.org_id, me.principal_id, p_key, p_request_hash, p_status, p_response)
    on conflict do nothing;
    get diagnostics stored = row_count;
    return stored = 1;
exception when check_violation then
    get stacked diagnostics broken_constraint = constraint_name;
    perform data._raise_invalid('invalid idempotency key or response', sqlerrm, broken_constraint);
end
$$;
comment on function service.idempotent_record(text, text, int, jsonb)
    is 'Remember a write''s response under its Idempotency-Key in the write''s transaction; false when the key is taken (a concurrent request with it committed first).';

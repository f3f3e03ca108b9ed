-- 0024_key_limits: API keys that expire, and keys narrower than their principal.
--
--   * data.api_keys.expires_at: after it the key authenticates nobody (28000, HTTP 401
--     saying the key expired); null: it lasts until revoked.
--   * data.api_keys.read_only: the key writes nothing, whatever its principal may write.
--   * data.api_keys.repos: null, or the only repos the key reaches. The bound principal's
--     effective grants are its grants intersected with its key's restriction
--     (data._acl, sql/functions/10_access.sql).
--   * data.principal_bindings.key_id: the key a binding was made with (null: bound by an
--     administrator or a login), so the restriction follows the binding.
--   * data._bind, data._standby_signature and data._standby_binding carry the key id,
--     api.create_api_key takes the limits and api.list_api_keys shows them: new
--     signatures, so the old functions are dropped and sql/functions creates the new ones.

alter table data.api_keys
    add column expires_at timestamptz,
    add column read_only boolean not null default false,
    add column repos text[],
    add constraint api_keys_repos_named check (
        repos is null or (cardinality(repos) between 1 and 100 and array_position(repos, null) is null)),
    add constraint api_keys_expire_after_creation check (expires_at is null or expires_at > created_at);
comment on column data.api_keys.expires_at is 'When the key stops authenticating (null: never; it still ends when revoked).';
comment on column data.api_keys.read_only is 'The key writes nothing, whatever its principal may write.';
comment on column data.api_keys.repos is 'Null, or the only repos the key reads and writes (within its principal''s grants).';

alter table data.principal_bindings add column key_id text;
comment on column data.principal_bindings.key_id is 'The API key the binding was made with (null: an administrator or a login).';

drop function if exists data._bind(text, text);
drop function if exists data._standby_binding(text);
drop function if exists data._standby_signature(text, text);
drop function if exists api.create_api_key(text, text, text, bytea, text);
drop function if exists api.list_api_keys(text);

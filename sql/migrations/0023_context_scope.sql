-- 0023_context_scope: a Context's scope bounds who reads it (docs/adr/0018, amendment).
--
--   * A Context of a persona or session scope is never shared: its live subscriptions
--     (made before this release allowed none) are revoked here, keeping the rows for
--     audit; a trigger (sql/functions/44_contexts.sql) refuses new ones.
--   * api.context_candidates and data._resolve_context_refs take the request's scope (a
--     Context, like a pin, serves only requests whose scope it lies within), and
--     api.context_add_version the ids a saved query found apart from those named by
--     the caller (kept within the Context's scope instead of refused): new signatures,
--     so the old functions are dropped and sql/functions creates the new ones.

update data.context_subscriptions s
set revoked_at = greatest(clock_timestamp(), s.created_at),
    revoked_by = 'migration 0023: a persona or session Context is not shared'
from data.contexts c
where c.context_id = s.context_id and s.revoked_at is null
  and (c.persona_id is not null or c.session_id is not null);

drop function if exists api.context_candidates(text, text[], text, jsonb, jsonb, int, boolean);
drop function if exists data._resolve_context_refs(text[]);
drop function if exists api.context_add_version(bigint, bigint[], bigint[], text[], text, jsonb);

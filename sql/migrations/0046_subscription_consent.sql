-- 0046_subscription_consent: a subscription gives nothing until a writer of the
-- subscriber scope accepts it (ADR 0018, amendment of 2026-12-06). Before, any writer of
-- a Context's scope could put that Context (its name, its description, its members)
-- into another org's listing and requests with no say of that org: a route for text
-- the subscriber never asked for. A subscription made by a principal that may itself
-- write the subscriber scope (an org writer sharing with a repo of its org) is accepted
-- as it is made.
--
-- The subscriptions live before this migration were already read by their subscribers:
-- they stay live, marked as accepted by this migration (accepted_by says so), and a
-- writer of the subscriber scope ends any of them with DELETE
-- /contexts/{id}/subscriptions/{sid}. Pending ones are listed by GET /subscriptions.
alter table data.context_subscriptions
    add column accepted_at timestamptz,
    add column accepted_by text,
    add constraint context_subscriptions_accepted_after_made
        check (accepted_at is null or accepted_at >= created_at),
    add constraint context_subscriptions_accepted_by_whom
        check ((accepted_at is null) = (accepted_by is null)),
    add constraint context_subscriptions_accepted_at_readable
        check (data._readable_time(accepted_at, 'context_subscriptions.accepted_at'));

update data.context_subscriptions
set accepted_at = created_at, accepted_by = 'migration 0046'
where revoked_at is null;

-- Their rows gain two columns: re-created by sql/functions/44_contexts.sql.
drop function if exists service.context_subscribe(bigint, text, text, int);
drop function if exists service.context_unsubscribe(bigint);
drop function if exists api.context_subscriptions(bigint, boolean);
-- Re-applied whatever the digest says, so no database is left without them.
update public.contexts_reapplied set digest = 'dropped by migration 0046';

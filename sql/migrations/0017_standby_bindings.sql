-- Principal bindings on a hot standby (docs/adr/0020-read-replicas.md). A standby is
-- read-only and cannot read unlogged tables, so data.principal_bindings is out of reach
-- there; a binding made on a standby is a transaction-local setting signed with this
-- key (data._standby_binding), which only the owner's security-definer functions read.
-- The key is made once per database and replicates with it.
create table data.binding_keys (
    key_id     smallint primary key default 1 check (key_id = 1),
    secret     bytea not null check (octet_length(secret) = 32),
    created_at timestamptz not null default now()
);
comment on table data.binding_keys is 'The key that signs principal bindings made on a hot standby (one row; no caller role may read it).';
-- gen_random_uuid draws from the server's strong random source: 3 x 122 random bits.
insert into data.binding_keys (secret)
values (sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')));
alter table data.binding_keys enable row level security;
alter table data.binding_keys force row level security;

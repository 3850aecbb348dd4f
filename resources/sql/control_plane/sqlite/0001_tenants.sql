-- Tenants and their extensions: the same columns and rules as the PostgreSQL control plane
-- (uuid/jsonb/timestamps stored as text, booleans as 0/1).
CREATE TABLE IF NOT EXISTS tenants (
    id text PRIMARY KEY,
    name text,
    external_id text NOT NULL UNIQUE,
    jwt_secret text,
    jwt_jwks text,
    postgres_cdc_default text NOT NULL DEFAULT 'postgres_cdc_rls',
    max_concurrent_users integer NOT NULL DEFAULT 200,
    max_events_per_second integer NOT NULL DEFAULT 100,
    max_bytes_per_second integer NOT NULL DEFAULT 100000,
    max_channels_per_client integer NOT NULL DEFAULT 100,
    max_joins_per_second integer NOT NULL DEFAULT 100,
    max_presence_events_per_second integer NOT NULL DEFAULT 1000,
    max_payload_size_in_kb integer NOT NULL DEFAULT 3000,
    max_client_presence_events_per_window integer,
    client_presence_window_ms integer,
    suspend integer NOT NULL DEFAULT 0,
    private_only integer NOT NULL DEFAULT 0,
    presence_enabled integer NOT NULL DEFAULT 0,
    migrations_ran integer NOT NULL DEFAULT 0,
    broadcast_adapter text NOT NULL DEFAULT 'gen_rpc',
    feature_flags text NOT NULL DEFAULT '{}',
    inserted_at text NOT NULL,
    updated_at text NOT NULL,
    CHECK (jwt_secret IS NOT NULL OR jwt_jwks IS NOT NULL)
);

CREATE TABLE IF NOT EXISTS extensions (
    id text PRIMARY KEY,
    type text NOT NULL,
    settings text NOT NULL DEFAULT '{}',
    tenant_external_id text NOT NULL REFERENCES tenants (external_id) ON DELETE CASCADE,
    inserted_at text NOT NULL,
    updated_at text NOT NULL,
    UNIQUE (tenant_external_id, type)
);

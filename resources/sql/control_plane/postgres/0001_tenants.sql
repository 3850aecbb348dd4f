-- Tenants and their extensions, compatible with Supabase Realtime's control plane (_realtime).
CREATE SCHEMA IF NOT EXISTS _realtime;

CREATE TABLE IF NOT EXISTS _realtime.tenants (
    id uuid PRIMARY KEY,
    name text,
    external_id text NOT NULL UNIQUE,
    jwt_secret text,
    jwt_jwks jsonb,
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
    suspend boolean NOT NULL DEFAULT false,
    private_only boolean NOT NULL DEFAULT false,
    presence_enabled boolean NOT NULL DEFAULT false,
    migrations_ran integer NOT NULL DEFAULT 0,
    broadcast_adapter text NOT NULL DEFAULT 'gen_rpc',
    feature_flags jsonb NOT NULL DEFAULT '{}'::jsonb,
    inserted_at timestamp(0) without time zone NOT NULL,
    updated_at timestamp(0) without time zone NOT NULL,
    CONSTRAINT jwt_secret_or_jwks_required CHECK (jwt_secret IS NOT NULL OR jwt_jwks IS NOT NULL)
);

CREATE TABLE IF NOT EXISTS _realtime.extensions (
    id uuid PRIMARY KEY,
    type text NOT NULL,
    settings jsonb NOT NULL DEFAULT '{}'::jsonb,
    tenant_external_id text NOT NULL REFERENCES _realtime.tenants (external_id) ON DELETE CASCADE,
    inserted_at timestamp(0) without time zone NOT NULL,
    updated_at timestamp(0) without time zone NOT NULL,
    UNIQUE (tenant_external_id, type)
);

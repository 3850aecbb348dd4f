-- 0001 roles and schema: the database roles Supabase clients and RLS policies name (anon,
-- authenticated, service_role), the owner role of the realtime objects (supabase_realtime_admin)
-- and the schema `realtime` with its usage grants.
--
-- Why: RLS checks run as the JWT's `role` claim (spec §7.1), so those roles must exist; policies
-- written for Supabase say `TO authenticated`. Roles are cluster-wide and creating them needs
-- CREATEROLE (BYPASSRLS even needs a superuser), which a tenant's database owner often lacks: every
-- creation is guarded and skipped with a NOTICE when not allowed, never an error, so that a
-- non-superuser owner can still run every migration.
--
-- Idempotent on its own and on top of Supabase's own realtime schema: nothing is dropped, roles
-- and the schema are created only when absent, and grants are repeatable.

DO $roles$
DECLARE
    spec record;
BEGIN
    FOR spec IN
        SELECT * FROM (VALUES
            ('anon', 'NOLOGIN NOINHERIT', false),
            ('authenticated', 'NOLOGIN NOINHERIT', false),
            ('service_role', 'NOLOGIN NOINHERIT BYPASSRLS', true),
            ('supabase_realtime_admin', 'NOLOGIN NOINHERIT NOREPLICATION', false)
        ) AS r(name, options, bypassrls)
    LOOP
        CONTINUE WHEN EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = spec.name);
        BEGIN
            EXECUTE format('CREATE ROLE %I %s', spec.name, spec.options);
        EXCEPTION
            WHEN insufficient_privilege THEN
                -- A CREATEROLE user that is no superuser may create the role, just not BYPASSRLS.
                IF spec.bypassrls THEN
                    BEGIN
                        EXECUTE format('CREATE ROLE %I NOLOGIN NOINHERIT', spec.name);
                        RAISE NOTICE 'role % created without BYPASSRLS (needs a superuser)', spec.name;
                    EXCEPTION
                        WHEN insufficient_privilege THEN
                            RAISE NOTICE 'role % is missing and % may not create it; skipped',
                                spec.name, current_user;
                    END;
                ELSE
                    RAISE NOTICE 'role % is missing and % may not create it; skipped',
                        spec.name, current_user;
                END IF;
            WHEN duplicate_object OR unique_violation THEN
                -- Roles are cluster-wide: a migration of another database created it meanwhile.
                RAISE NOTICE 'role % was created concurrently', spec.name;
        END;
    END LOOP;
END
$roles$;

-- The server switches to the JWT role (SET LOCAL role) for RLS checks, which needs membership.
-- A superuser needs none; a CREATEROLE user that just created the roles is not a member yet.
DO $membership$
DECLARE
    role_name text;
BEGIN
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        RETURN;
    END IF;
    FOREACH role_name IN ARRAY ARRAY['anon', 'authenticated', 'service_role'] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = role_name);
        CONTINUE WHEN pg_catalog.pg_has_role(current_user, role_name, 'MEMBER');
        BEGIN
            EXECUTE format('GRANT %I TO %I', role_name, current_user);
        EXCEPTION
            WHEN insufficient_privilege OR invalid_grant_operation THEN
                RAISE NOTICE '% is not a member of role % and may not become one; RLS checks as % will fail',
                    current_user, role_name, role_name;
        END;
    END LOOP;
END
$membership$;

CREATE SCHEMA IF NOT EXISTS realtime;

-- Usage for the API roles (they reach realtime.messages and realtime.topic() from policies), and
-- usage + create for the owner role, as Supabase's schema grants them. Only roles that exist get
-- grants; a grant the current user may not give is reported, not fatal (the schema may belong to
-- someone else when Supabase created it).
DO $grants$
DECLARE
    role_name text;
    privileges text;
BEGIN
    FOREACH role_name IN ARRAY ARRAY['anon', 'authenticated', 'service_role', 'supabase_realtime_admin'] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = role_name);
        privileges := CASE WHEN role_name = 'supabase_realtime_admin' THEN 'USAGE, CREATE' ELSE 'USAGE' END;
        BEGIN
            EXECUTE format('GRANT %s ON SCHEMA realtime TO %I', privileges, role_name);
        EXCEPTION
            WHEN insufficient_privilege THEN
                RAISE NOTICE 'cannot grant % on schema realtime to %: %', privileges, role_name, SQLERRM;
        END;
    END LOOP;
END
$grants$;

-- 0006 ownership: hands the realtime objects to the role supabase_realtime_admin, as Supabase's
-- schema does (spec §7.6), and grants EXECUTE on the functions API roles call.
--
-- Why: Supabase tooling and its own server expect supabase_realtime_admin to own realtime.messages,
-- realtime.subscription, the types and the functions; roles that are members of it (postgres on
-- Supabase) manage them through that membership.
--
-- Only done when the role exists and the current user may act as it (superuser, or member of it):
-- PostgreSQL requires that of ALTER ... OWNER TO. Otherwise (e.g. a tenant database owner without
-- CREATEROLE, where 0001 could not create the role) the objects stay owned by the migrating user,
-- which is just as functional for our server. An object that belongs to a role we cannot act as is
-- left alone. Idempotent: changing an owner to the current owner does nothing.
DO $owner$
DECLARE
    target oid := (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = 'supabase_realtime_admin');
    item record;
BEGIN
    IF target IS NULL THEN
        RAISE NOTICE 'role supabase_realtime_admin is missing; realtime objects stay owned by their creator';
        RETURN;
    END IF;
    IF NOT pg_catalog.pg_has_role(current_user, target, 'MEMBER') THEN
        RAISE NOTICE '% may not act as supabase_realtime_admin; realtime objects keep their owners', current_user;
        RETURN;
    END IF;

    FOR item IN
        -- Tables (with the messages partitions) and types of the schema.
        SELECT format('ALTER TABLE %s OWNER TO supabase_realtime_admin', c.oid::regclass) AS statement,
               c.relowner AS owner
          FROM pg_catalog.pg_class c
         WHERE c.relnamespace = 'realtime'::regnamespace
           AND c.relkind IN ('r', 'p')
           AND (c.relname IN ('messages', 'subscription')
                OR c.relname ~ '^messages_[0-9]{4}_[0-9]{2}_[0-9]{2}$')
        UNION ALL
        SELECT format('ALTER TYPE %s OWNER TO supabase_realtime_admin', t.oid::regtype), t.typowner
          FROM pg_catalog.pg_type t
         WHERE t.typnamespace = 'realtime'::regnamespace
           AND t.typname IN ('equality_op', 'action', 'user_defined_filter', 'wal_column', 'wal_rls')
        UNION ALL
        SELECT format('ALTER FUNCTION %s OWNER TO supabase_realtime_admin', p.oid::regprocedure), p.proowner
          FROM pg_catalog.pg_proc p
         WHERE p.pronamespace = 'realtime'::regnamespace
           AND p.proname IN ('to_regrole', 'subscription_check_filters', 'create_messages_partitions',
                             'drop_messages_partitions', 'topic', 'send', 'send_binary',
                             'broadcast_changes', 'cast', 'check_equality_op',
                             'is_visible_through_filters', 'build_prepared_statement_sql')
    LOOP
        CONTINUE WHEN item.owner = target;
        CONTINUE WHEN NOT pg_catalog.pg_has_role(current_user, item.owner, 'MEMBER');
        EXECUTE item.statement;
    END LOOP;
END
$owner$;

-- EXECUTE is PUBLIC's by default; these say so explicitly for the roles policies and tools run as
-- (Supabase grants them the same way), and keep working if PUBLIC's default was revoked.
DO $grants$
DECLARE
    role_name text;
    signature text;
BEGIN
    FOREACH role_name IN ARRAY ARRAY['anon', 'authenticated', 'service_role'] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = role_name);
        FOREACH signature IN ARRAY ARRAY[
            'realtime.topic()',
            'realtime.to_regrole(text)',
            'realtime.subscription_check_filters()',
            'realtime."cast"(text, regtype)',
            'realtime.check_equality_op(realtime.equality_op, regtype, text, text)',
            'realtime.check_equality_op(realtime.equality_op, regtype, text, text, boolean)',
            'realtime.is_visible_through_filters(realtime.wal_column[], realtime.user_defined_filter[])',
            'realtime.build_prepared_statement_sql(text, regclass, realtime.wal_column[])'
        ] LOOP
            BEGIN
                EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', signature, role_name);
            EXCEPTION
                WHEN insufficient_privilege THEN
                    RAISE NOTICE 'cannot grant execute on % to %: %', signature, role_name, SQLERRM;
            END;
        END LOOP;
    END LOOP;
END
$grants$;

-- 0002 types: the composite and enum types of Supabase's realtime schema (spec §6.3).
--   realtime.equality_op          filter operators of postgres_changes subscriptions
--   realtime.action               change kinds (INSERT, UPDATE, DELETE, TRUNCATE, ERROR)
--   realtime.user_defined_filter  one filter: column_name, op, value, negate
--   realtime.wal_column           one column of a decoded change (for realtime.is_visible_through_filters)
--   realtime.wal_rls              a change with its matching subscriptions (kept for tools that name it)
--
-- Why: realtime.subscription.filters is a realtime.user_defined_filter[] and tools written for
-- Supabase read and write it; our server evaluates filters itself but stores them in this shape.
--
-- Idempotent: a type is created only when absent. An older Supabase schema may have
-- equality_op with only eq..in and user_defined_filter without `negate`: the missing enum labels
-- and the attribute are added. This file is separate from the functions that use the new labels
-- because PostgreSQL refuses to use an enum label in the transaction that added it.

DO $types$
BEGIN
    IF to_regtype('realtime.equality_op') IS NULL THEN
        CREATE TYPE realtime.equality_op AS ENUM (
            'eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'in',
            'like', 'ilike', 'is', 'match', 'imatch', 'isdistinct'
        );
    END IF;

    IF to_regtype('realtime.action') IS NULL THEN
        CREATE TYPE realtime.action AS ENUM ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'ERROR');
    END IF;

    IF to_regtype('realtime.user_defined_filter') IS NULL THEN
        CREATE TYPE realtime.user_defined_filter AS (
            column_name text,
            op realtime.equality_op,
            value text,
            negate boolean
        );
    END IF;

    IF to_regtype('realtime.wal_column') IS NULL THEN
        CREATE TYPE realtime.wal_column AS (
            name text,
            type_name text,
            type_oid oid,
            value jsonb,
            is_pkey boolean,
            is_selectable boolean
        );
    END IF;

    IF to_regtype('realtime.wal_rls') IS NULL THEN
        CREATE TYPE realtime.wal_rls AS (
            wal jsonb,
            is_rls_enabled boolean,
            subscription_ids uuid[],
            errors text[]
        );
    END IF;
END
$types$;

-- Labels an older equality_op lacks. New labels go last, as in Supabase's own history, so the sort
-- order of existing filters does not change. Checked first only to keep the log free of NOTICEs.
DO $labels$
DECLARE
    label text;
BEGIN
    FOREACH label IN ARRAY ARRAY['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'in',
                                 'like', 'ilike', 'is', 'match', 'imatch', 'isdistinct'] LOOP
        CONTINUE WHEN EXISTS (
            SELECT FROM pg_catalog.pg_enum
            WHERE enumtypid = 'realtime.equality_op'::regtype AND enumlabel = label);
        EXECUTE format('ALTER TYPE realtime.equality_op ADD VALUE IF NOT EXISTS %L', label);
    END LOOP;
END
$labels$;

-- `negate` (PostgREST's `not.` prefix) came late to Supabase's filter type. ADD ATTRIBUTE has no
-- IF NOT EXISTS, hence the catalog check. Stored filters without it read back with negate NULL,
-- which every consumer treats as false.
DO $negate$
BEGIN
    IF NOT EXISTS (
        SELECT FROM pg_catalog.pg_attribute
        WHERE attrelid = (SELECT typrelid FROM pg_catalog.pg_type
                          WHERE oid = 'realtime.user_defined_filter'::regtype)
          AND attname = 'negate'
          AND NOT attisdropped
    ) THEN
        ALTER TYPE realtime.user_defined_filter ADD ATTRIBUTE negate boolean CASCADE;
    END IF;
END
$negate$;

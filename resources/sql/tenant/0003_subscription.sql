-- 0003 subscription: realtime.subscription (one row per postgres_changes binding and matched
-- table, spec §6.3), its trigger tr_check_filters → realtime.subscription_check_filters(), and the
-- helper realtime.to_regrole(text) that its generated column claims_role needs.
--
-- Why: the server validates a subscription by inserting it here (the trigger's errors are the
-- texts clients see, spec §6.2) and Supabase tools list subscriptions from this table. Our server
-- evaluates filters and RLS itself; the rows are the subscribe-time check and the shared record.
--
-- Idempotent, and compatible with a table Supabase's server created: the table is created when
-- absent, missing columns are added, functions are replaced with the same signatures and
-- parameter names, and nothing is dropped. The unique index is created only when no unique index
-- with the same definition exists (whatever its name).

-- IMMUTABLE although a role can be dropped: PostgreSQL requires it of a generated column's
-- expression, and a row whose role disappears is stale anyway (the server deletes rows of dead
-- channels). Parameter name as in Supabase's schema so that CREATE OR REPLACE keeps working there.
CREATE OR REPLACE FUNCTION realtime.to_regrole(role_name text)
RETURNS regrole
LANGUAGE sql
IMMUTABLE
AS $fn$
    SELECT role_name::regrole
$fn$;

-- Validates and normalises a subscription row; raises the texts of spec §6.2 (clients see them in
-- "An exception happened ... Exception: <message>"). Must stay true:
--   - a filter's column must exist in NEW.entity and be SELECT-able by the claims role;
--   - in: the value is an array literal ({a,b,"c,d"}) whose elements cast to the column type, at
--     most 100 of them; is: null/true/false/unknown, the last three on boolean columns only;
--     like/ilike/match/imatch: string-category columns, match/imatch regexes must compile;
--     every other operator: the value casts to the column type;
--   - selected_columns name existing, SELECT-able columns;
--   - filters are sorted (column, op, value, negate; negate NULL stored as false) and
--     selected_columns sorted and deduplicated, so the unique index cannot be defeated by order.
CREATE OR REPLACE FUNCTION realtime.subscription_check_filters()
RETURNS trigger
LANGUAGE plpgsql
AS $fn$
DECLARE
    claims_role_name text := NEW.claims ->> 'role';
    visible_columns text[];
    filter realtime.user_defined_filter;
    column_type regtype;
    value_count integer;
    selected_column text;
BEGIN
    -- Raises "role ... does not exist" for an unknown role as soon as the table has a column.
    SELECT coalesce(array_agg(a.attname::text ORDER BY a.attnum), '{}')
      INTO visible_columns
      FROM pg_catalog.pg_attribute a
     WHERE a.attrelid = NEW.entity
       AND a.attnum > 0
       AND NOT a.attisdropped
       AND pg_catalog.has_column_privilege(claims_role_name, a.attrelid, a.attnum, 'SELECT');

    FOREACH filter IN ARRAY coalesce(NEW.filters, '{}') LOOP
        IF filter.column_name IS NULL OR NOT (filter.column_name = ANY (visible_columns)) THEN
            RAISE EXCEPTION 'invalid column for filter %', filter.column_name;
        END IF;

        SELECT a.atttypid::regtype
          INTO column_type
          FROM pg_catalog.pg_attribute a
         WHERE a.attrelid = NEW.entity
           AND a.attname = filter.column_name
           AND a.attnum > 0
           AND NOT a.attisdropped;

        IF filter.op IS NULL THEN
            RAISE EXCEPTION 'invalid operator for filter %', filter.column_name;
        ELSIF filter.op = 'in' THEN
            -- The cast checks every element; column_type's text form is a quoted type name.
            EXECUTE format('SELECT pg_catalog.cardinality(%L::%s[])', filter.value, column_type)
               INTO value_count;
            IF coalesce(value_count, 0) > 100 THEN
                RAISE EXCEPTION 'too many values for `in` filter. Maximum 100';
            END IF;
        ELSIF filter.op = 'is' THEN
            IF filter.value IS NULL OR filter.value NOT IN ('null', 'true', 'false', 'unknown') THEN
                RAISE EXCEPTION 'invalid value for is filter: must be null, true, false, or unknown';
            END IF;
            IF filter.value <> 'null' AND column_type <> 'boolean'::regtype THEN
                RAISE EXCEPTION 'is % filter requires a boolean column, got %', filter.value, column_type;
            END IF;
        ELSIF filter.op IN ('like', 'ilike', 'match', 'imatch') THEN
            IF (SELECT t.typcategory FROM pg_catalog.pg_type t WHERE t.oid = column_type) IS DISTINCT FROM 'S' THEN
                RAISE EXCEPTION 'operator % requires a text-compatible column type, got %', filter.op, column_type;
            END IF;
            IF filter.op IN ('match', 'imatch') THEN
                -- Compiling the pattern is the check; a bad one must fail here, not when a change
                -- is evaluated.
                BEGIN
                    IF filter.op = 'match' THEN
                        PERFORM '' ~ filter.value;
                    ELSE
                        PERFORM '' ~* filter.value;
                    END IF;
                EXCEPTION
                    WHEN OTHERS THEN
                        RAISE EXCEPTION 'invalid regular expression for % filter: %', filter.op, SQLERRM;
                END;
            END IF;
        ELSE
            -- eq, neq, lt, lte, gt, gte, isdistinct: raises the cast's own error (e.g. invalid
            -- input syntax for type integer: "abc").
            EXECUTE format('SELECT %L::%s', filter.value, column_type);
        END IF;
    END LOOP;

    IF NEW.selected_columns IS NOT NULL THEN
        FOREACH selected_column IN ARRAY NEW.selected_columns LOOP
            IF selected_column IS NULL OR NOT (selected_column = ANY (visible_columns)) THEN
                RAISE EXCEPTION 'invalid column for select %', selected_column;
            END IF;
        END LOOP;
    END IF;

    NEW.filters := coalesce(
        (SELECT array_agg(ROW(f.column_name, f.op, f.value, coalesce(f.negate, false))::realtime.user_defined_filter
                          ORDER BY f.column_name, f.op, f.value, coalesce(f.negate, false))
           FROM unnest(NEW.filters) f),
        '{}');
    -- An empty selection means "all columns", stored as NULL like Supabase does.
    NEW.selected_columns := (SELECT array_agg(DISTINCT c ORDER BY c) FROM unnest(NEW.selected_columns) c);
    RETURN NEW;
END
$fn$;

CREATE TABLE IF NOT EXISTS realtime.subscription (
    id bigint GENERATED ALWAYS AS IDENTITY,
    subscription_id uuid NOT NULL,
    entity regclass NOT NULL,
    filters realtime.user_defined_filter[] NOT NULL DEFAULT '{}',
    claims jsonb NOT NULL,
    claims_role regrole NOT NULL GENERATED ALWAYS AS (realtime.to_regrole(claims ->> 'role')) STORED,
    created_at timestamp without time zone NOT NULL DEFAULT timezone('utc', now()),
    action_filter text DEFAULT '*'
        CONSTRAINT subscription_action_filter_check CHECK (action_filter IN ('*', 'INSERT', 'UPDATE', 'DELETE')),
    selected_columns text[],
    CONSTRAINT pk_subscription PRIMARY KEY (id)
);

-- Columns an older Supabase table lacks (each a no-op when present).
ALTER TABLE realtime.subscription
    ADD COLUMN IF NOT EXISTS filters realtime.user_defined_filter[] NOT NULL DEFAULT '{}',
    ADD COLUMN IF NOT EXISTS claims_role regrole NOT NULL
        GENERATED ALWAYS AS (realtime.to_regrole(claims ->> 'role')) STORED,
    ADD COLUMN IF NOT EXISTS created_at timestamp without time zone NOT NULL DEFAULT timezone('utc', now()),
    ADD COLUMN IF NOT EXISTS action_filter text DEFAULT '*'
        CONSTRAINT subscription_action_filter_check CHECK (action_filter IN ('*', 'INSERT', 'UPDATE', 'DELETE')),
    ADD COLUMN IF NOT EXISTS selected_columns text[];

-- The upsert target of the server (ON CONFLICT ... DO UPDATE SET claims, created_at). Looked up by
-- definition: Supabase's index has the same columns under a (truncated) name of its own.
DO $unique$
BEGIN
    IF NOT EXISTS (
        SELECT FROM pg_catalog.pg_index i
        WHERE i.indrelid = 'realtime.subscription'::regclass
          AND i.indisunique
          AND split_part(pg_catalog.pg_get_indexdef(i.indexrelid), ' USING ', 2)
              = 'btree (subscription_id, entity, filters, action_filter, COALESCE(selected_columns, ''{}''::text[]))'
    ) THEN
        CREATE UNIQUE INDEX subscription_subscription_id_entity_filters_action_filter_selec
            ON realtime.subscription (subscription_id, entity, filters, action_filter, coalesce(selected_columns, '{}'));
    END IF;
END
$unique$;

-- Rows are deleted and wiped per table (entity) by the server.
CREATE INDEX IF NOT EXISTS ix_realtime_subscription_entity ON realtime.subscription (entity);

CREATE OR REPLACE TRIGGER tr_check_filters
    BEFORE INSERT OR UPDATE ON realtime.subscription
    FOR EACH ROW
    EXECUTE FUNCTION realtime.subscription_check_filters();

DO $grants$
DECLARE
    role_name text;
BEGIN
    FOREACH role_name IN ARRAY ARRAY['anon', 'authenticated', 'service_role'] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = role_name);
        BEGIN
            EXECUTE format('GRANT SELECT ON TABLE realtime.subscription TO %I', role_name);
        EXCEPTION
            WHEN insufficient_privilege THEN
                RAISE NOTICE 'cannot grant select on realtime.subscription to %: %', role_name, SQLERRM;
        END;
    END LOOP;
END
$grants$;

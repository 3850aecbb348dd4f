-- 0005 functions: the SQL interface of Supabase Realtime that users and tools call in a tenant
-- database (spec §4.6, §6.5, §7.1):
--   realtime.topic() RETURNS text                                   the topic of the RLS check
--   realtime.send(payload jsonb, event text, topic text, private boolean DEFAULT true) RETURNS void
--   realtime.send_binary(payload bytea, event text, topic text, private boolean DEFAULT true) RETURNS void
--   realtime.broadcast_changes(topic_name text, event_name text, operation text, table_name text,
--       table_schema text, new record, old record, level text DEFAULT 'ROW') RETURNS void
--   realtime."cast"(val text, type_ regtype) RETURNS jsonb
--   realtime.check_equality_op(op, type_, val_1, val_2 [, negate boolean]) RETURNS boolean
--   realtime.is_visible_through_filters(columns realtime.wal_column[],
--       filters realtime.user_defined_filter[]) RETURNS boolean
--   realtime.build_prepared_statement_sql(prepared_statement_name text, entity regclass,
--       columns realtime.wal_column[]) RETURNS text
--
-- Why: broadcast from the database goes through realtime.send (its rows are streamed by the
-- server), RLS policies on realtime.messages call realtime.topic(), and the filter helpers are the
-- documented semantics of postgres_changes filters (our server evaluates them itself in C++; these
-- are for tools and for checking a filter by hand). Not provided: realtime.apply_rls and
-- realtime.list_changes (they need wal2json and Supabase's polling design, which our server
-- replaces with pgoutput), realtime.quote_wal2json / wal2json_escape_identifier (wal2json only).
--
-- Idempotent: CREATE OR REPLACE with the signatures, parameter names, return types and defaults
-- of Supabase's schema, so replacing its functions works and keeps existing callers working.

-- The topic the server sets (transaction-local) before an RLS check, and that realtime.send sets
-- before its insert; NULL when unset.
CREATE OR REPLACE FUNCTION realtime.topic()
RETURNS text
LANGUAGE sql
STABLE
AS $fn$
    SELECT nullif(pg_catalog.current_setting('realtime.topic', true), '')
$fn$;

-- Inserts one broadcast into realtime.messages. Must stay true: a JSON object payload without an
-- "id" key gets the message's id (so clients can deduplicate), one with an "id" keeps it;
-- realtime.topic is set transaction-locally first so that INSERT policies see the topic; any error
-- is turned into a WARNING so that the calling transaction (often a user's trigger) never fails
-- because of a broadcast.
CREATE OR REPLACE FUNCTION realtime.send(payload jsonb, event text, topic text, private boolean DEFAULT true)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    message_id uuid := gen_random_uuid();
    message_payload jsonb := payload;
BEGIN
    BEGIN
        IF jsonb_typeof(message_payload) = 'object' AND NOT message_payload ? 'id' THEN
            message_payload := message_payload || jsonb_build_object('id', message_id);
        END IF;
        PERFORM pg_catalog.set_config('realtime.topic', topic, true);
        INSERT INTO realtime.messages (id, payload, event, topic, private, extension)
        VALUES (message_id, message_payload, event, topic, private, 'broadcast');
    EXCEPTION
        WHEN OTHERS THEN
            RAISE WARNING 'WarnSendingBroadcastMessage: %', SQLERRM;
    END;
END
$fn$;

-- realtime.send for raw bytes: stored in binary_payload (delivered to v2 clients as a binary
-- broadcast, dropped for v1 clients). Same guarantees as realtime.send.
CREATE OR REPLACE FUNCTION realtime.send_binary(payload bytea, event text, topic text, private boolean DEFAULT true)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    message_id uuid := gen_random_uuid();
BEGIN
    BEGIN
        PERFORM pg_catalog.set_config('realtime.topic', topic, true);
        INSERT INTO realtime.messages (id, binary_payload, event, topic, private, extension)
        VALUES (message_id, payload, event, topic, private, 'broadcast');
    EXCEPTION
        WHEN OTHERS THEN
            RAISE WARNING 'WarnSendingBroadcastMessage: %', SQLERRM;
    END;
END
$fn$;

-- For row triggers: broadcasts {"old_record":OLD,"record":NEW,"operation":..,"table":..,"schema":..}
-- (plus the "id" realtime.send adds) as a private message. Typical use:
--   PERFORM realtime.broadcast_changes('topic:' || NEW.id, TG_OP, TG_OP, TG_TABLE_NAME,
--                                      TG_TABLE_SCHEMA, NEW, OLD, TG_LEVEL);
-- Raises (prefixed "Failed to process the row: ") for a statement-level trigger or an operation
-- other than INSERT/UPDATE/DELETE; failures inside realtime.send stay warnings.
CREATE OR REPLACE FUNCTION realtime.broadcast_changes(
    topic_name text,
    event_name text,
    operation text,
    table_name text,
    table_schema text,
    new record,
    old record,
    level text DEFAULT 'ROW')
RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
    IF level = 'STATEMENT' THEN
        RAISE EXCEPTION 'function can only be triggered for each row, not for each statement';
    END IF;
    IF operation IS NULL OR operation NOT IN ('INSERT', 'UPDATE', 'DELETE') THEN
        RAISE EXCEPTION 'Unexpected operation type: %', operation;
    END IF;
    PERFORM realtime.send(
        jsonb_build_object(
            'old_record', broadcast_changes.old,
            'record', broadcast_changes.new,
            'operation', operation,
            'table', table_name,
            'schema', table_schema),
        event_name,
        topic_name);
EXCEPTION
    WHEN OTHERS THEN
        RAISE EXCEPTION 'Failed to process the row: %', SQLERRM;
END
$fn$;

-- A column value (text, as a change carries it) as JSON of its typed value: '1'::int4 → 1,
-- 't'::bool → true. bytea stays the text it came as (hex), as Supabase's changes show it.
CREATE OR REPLACE FUNCTION realtime."cast"(val text, type_ regtype)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
AS $fn$
DECLARE
    result jsonb;
BEGIN
    IF type_ = 'bytea'::regtype THEN
        RETURN to_jsonb(val);
    END IF;
    EXECUTE format('SELECT to_jsonb(%L::%s)', val, type_) INTO result;
    RETURN result;
END
$fn$;

-- Evaluates one filter: val_1 (the column's value as text) <op> val_2 (the filter's value), both
-- typed as type_ (val_2 as type_[] for in; as a text pattern for like/ilike/match/imatch; a
-- keyword for is). Comparisons with NULL give NULL (callers treat that as no match), except is
-- and isdistinct. negate inverts the result (is → IS NOT, isdistinct → IS NOT DISTINCT FROM).
CREATE OR REPLACE FUNCTION realtime.check_equality_op(
    op realtime.equality_op,
    type_ regtype,
    val_1 text,
    val_2 text,
    negate boolean)
RETURNS boolean
LANGUAGE plpgsql
STABLE
AS $fn$
DECLARE
    expression text;
    result boolean;
BEGIN
    expression := CASE op
        WHEN 'eq' THEN '%1$L::%3$s = %2$L::%3$s'
        WHEN 'neq' THEN '%1$L::%3$s <> %2$L::%3$s'
        WHEN 'lt' THEN '%1$L::%3$s < %2$L::%3$s'
        WHEN 'lte' THEN '%1$L::%3$s <= %2$L::%3$s'
        WHEN 'gt' THEN '%1$L::%3$s > %2$L::%3$s'
        WHEN 'gte' THEN '%1$L::%3$s >= %2$L::%3$s'
        WHEN 'in' THEN '%1$L::%3$s = ANY (%2$L::%3$s[])'
        WHEN 'like' THEN '%1$L::%3$s LIKE %2$L'
        WHEN 'ilike' THEN '%1$L::%3$s ILIKE %2$L'
        WHEN 'match' THEN '%1$L::%3$s ~ %2$L'
        WHEN 'imatch' THEN '%1$L::%3$s ~* %2$L'
        WHEN 'isdistinct' THEN '%1$L::%3$s IS DISTINCT FROM %2$L::%3$s'
        WHEN 'is' THEN '%1$L::%3$s IS ' || CASE val_2
            WHEN 'null' THEN 'NULL'
            WHEN 'true' THEN 'TRUE'
            WHEN 'false' THEN 'FALSE'
            WHEN 'unknown' THEN 'UNKNOWN'
        END
    END;
    IF op = 'is' AND expression IS NULL THEN
        RAISE EXCEPTION 'invalid value for is filter: must be null, true, false, or unknown';
    END IF;
    IF expression IS NULL THEN
        RAISE EXCEPTION 'unsupported equality operator: %', op;
    END IF;
    EXECUTE format('SELECT ' || expression, val_1, val_2, type_) INTO result;
    IF negate THEN
        RETURN NOT result;
    END IF;
    RETURN result;
END
$fn$;

-- The original signature (eq .. in, no negation), kept for callers written against it.
CREATE OR REPLACE FUNCTION realtime.check_equality_op(
    op realtime.equality_op,
    type_ regtype,
    val_1 text,
    val_2 text)
RETURNS boolean
LANGUAGE sql
STABLE
AS $fn$
    SELECT realtime.check_equality_op(op, type_, val_1, val_2, false)
$fn$;

-- True when a change's columns pass every filter (AND): each filter's column must be present and
-- its comparison true; NULL comparisons count as false. No filters: visible.
CREATE OR REPLACE FUNCTION realtime.is_visible_through_filters(
    columns realtime.wal_column[],
    filters realtime.user_defined_filter[])
RETURNS boolean
LANGUAGE sql
STABLE
AS $fn$
    SELECT CASE
        WHEN coalesce(pg_catalog.cardinality(filters), 0) = 0 THEN true
        ELSE coalesce((
            SELECT bool_and(
                       CASE
                           WHEN c.name IS NULL THEN false
                           ELSE coalesce(
                               realtime.check_equality_op(
                                   f.op,
                                   coalesce(c.type_oid::regtype, c.type_name::regtype),
                                   c.value #>> '{}',
                                   f.value,
                                   coalesce(f.negate, false)),
                               false)
                       END)
              FROM unnest(filters) f
              LEFT JOIN LATERAL (
                  SELECT col.* FROM unnest(columns) col WHERE col.name = f.column_name LIMIT 1
              ) c ON true),
            false)
    END
$fn$;

-- SQL that prepares a statement telling whether the row with the primary-key values of columns
-- (is_pkey) exists in entity: "PREPARE <name> AS SELECT EXISTS (SELECT 1 FROM <schema>.<table> WHERE
-- pk = 'v' AND ...)". NULL when columns has no primary-key column. The name is used as given.
CREATE OR REPLACE FUNCTION realtime.build_prepared_statement_sql(
    prepared_statement_name text,
    entity regclass,
    columns realtime.wal_column[])
RETURNS text
LANGUAGE sql
STABLE
AS $fn$
    SELECT 'PREPARE ' || prepared_statement_name || ' AS SELECT EXISTS (SELECT 1 FROM '
           || (SELECT format('%I.%I', n.nspname, c.relname)
                 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                WHERE c.oid = entity)
           || ' WHERE ' || string_agg(quote_ident(c.name) || ' = ' || quote_nullable(c.value #>> '{}'), ' AND ')
           || ')'
      FROM unnest(columns) c
     WHERE c.is_pkey
    HAVING count(*) > 0
$fn$;

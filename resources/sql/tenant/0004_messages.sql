-- 0004 messages: realtime.messages (spec §7.5), the table behind private-channel authorization
-- (RLS policies on it are evaluated as the JWT role, §7.1) and behind broadcast from the database
-- (every row inserted is streamed to clients, §4.6); its daily partitions and the functions that
-- maintain them; the publications the server's replication reads.
--   realtime.create_messages_partitions(from_date date, to_date date) RETURNS integer
--       creates the missing daily partitions realtime.messages_YYYY_MM_DD for every day of
--       [from_date, to_date]; returns how many it created. The server calls it on connect and
--       periodically for yesterday .. today+3 (UTC dates).
--   realtime.drop_messages_partitions(retention interval DEFAULT '72 hours') RETURNS integer
--       drops the daily partitions whose day is before the UTC date of now() - retention (Supabase
--       keeps 72 hours); returns how many it dropped.
--   Both need the caller to own realtime.messages (or be a member of its owner): no SECURITY
--   DEFINER, EXECUTE revoked from PUBLIC.
--   Publication supabase_realtime_messages_publication FOR TABLE realtime.messages WITH
--       (publish_via_partition_root = true): changes arrive as realtime.messages, not as a
--       partition, whatever day they fall on.
--   Publication supabase_realtime (empty when created here): the tables users enable for
--       postgres_changes.
--
-- Idempotent, and compatible with Supabase's own table: the table is created when absent and a
-- missing binary_payload column/constraint added; partitions are created only when missing (and
-- skipped with a NOTICE if an existing partition overlaps the day); an existing publication
-- missing realtime.messages gets it added and is switched to publish_via_partition_root when we
-- own it (Supabase's server accepts both partition and root names). A user without CREATE on the
-- database gets a NOTICE instead of the publications, not a failed migration.

CREATE TABLE IF NOT EXISTS realtime.messages (
    topic text NOT NULL,
    extension text NOT NULL,
    payload jsonb,
    event text,
    private boolean DEFAULT false,
    updated_at timestamp without time zone NOT NULL DEFAULT now(),
    inserted_at timestamp without time zone NOT NULL DEFAULT now(),
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    binary_payload bytea,
    CONSTRAINT messages_pkey PRIMARY KEY (id, inserted_at),
    CONSTRAINT messages_payload_exclusive CHECK (payload IS NULL OR binary_payload IS NULL)
) PARTITION BY RANGE (inserted_at);

-- A table created by an older Supabase server has no binary_payload (send_binary's column).
ALTER TABLE realtime.messages ADD COLUMN IF NOT EXISTS binary_payload bytea;

DO $exclusive$
BEGIN
    IF NOT EXISTS (
        SELECT FROM pg_catalog.pg_constraint
        WHERE conrelid = 'realtime.messages'::regclass AND conname = 'messages_payload_exclusive'
    ) THEN
        -- NOT VALID: old rows are not scanned (they cannot have binary_payload anyway).
        ALTER TABLE realtime.messages
            ADD CONSTRAINT messages_payload_exclusive
            CHECK (payload IS NULL OR binary_payload IS NULL) NOT VALID;
    END IF;
END
$exclusive$;

-- Without policies, RLS denies private channels to every role but owners and BYPASSRLS roles.
ALTER TABLE realtime.messages ENABLE ROW LEVEL SECURITY;

-- Replay (config.broadcast.replay) reads private broadcasts of a topic newest first.
CREATE INDEX IF NOT EXISTS messages_inserted_at_topic_index
    ON realtime.messages (inserted_at DESC, topic)
    WHERE extension = 'broadcast' AND private IS TRUE;

DO $grants$
DECLARE
    role_name text;
BEGIN
    FOREACH role_name IN ARRAY ARRAY['anon', 'authenticated', 'service_role'] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = role_name);
        BEGIN
            EXECUTE format('GRANT INSERT, SELECT, UPDATE ON TABLE realtime.messages TO %I', role_name);
        EXCEPTION
            WHEN insufficient_privilege THEN
                RAISE NOTICE 'cannot grant on realtime.messages to %: %', role_name, SQLERRM;
        END;
    END LOOP;
END
$grants$;

-- Daily partitions, named after their UTC day, bounds [day, day + 1). A day whose range an
-- existing partition already covers (an old Supabase server made unaligned ones) is skipped.
CREATE OR REPLACE FUNCTION realtime.create_messages_partitions(from_date date, to_date date)
RETURNS integer
LANGUAGE plpgsql
AS $fn$
DECLARE
    partition_day date;
    partition_name text;
    created integer := 0;
BEGIN
    IF from_date IS NULL OR to_date IS NULL THEN
        RETURN 0;
    END IF;
    FOR partition_day IN SELECT d::date FROM generate_series(from_date::timestamp, to_date::timestamp, interval '1 day') AS d LOOP
        partition_name := 'messages_' || to_char(partition_day, 'YYYY_MM_DD');
        CONTINUE WHEN to_regclass(format('realtime.%I', partition_name)) IS NOT NULL;
        BEGIN
            EXECUTE format('CREATE TABLE realtime.%I PARTITION OF realtime.messages FOR VALUES FROM (%L) TO (%L)',
                           partition_name, partition_day::timestamp, (partition_day + 1)::timestamp);
            created := created + 1;
        EXCEPTION
            WHEN invalid_object_definition THEN
                RAISE NOTICE 'partition % skipped: %', partition_name, SQLERRM;
            WHEN duplicate_table THEN
                -- Created concurrently by another session.
                NULL;
        END;
    END LOOP;
    RETURN created;
END
$fn$;

CREATE OR REPLACE FUNCTION realtime.drop_messages_partitions(retention interval DEFAULT interval '72 hours')
RETURNS integer
LANGUAGE plpgsql
AS $fn$
DECLARE
    cutoff date := (timezone('utc', now()) - retention)::date;
    child record;
    dropped integer := 0;
BEGIN
    IF retention IS NULL THEN
        RETURN 0;
    END IF;
    -- Only partitions this scheme names (messages_YYYY_MM_DD); anything else attached is left alone.
    FOR child IN
        SELECT c.relname
          FROM pg_catalog.pg_inherits i
          JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid
          JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         WHERE i.inhparent = 'realtime.messages'::regclass
           AND n.nspname = 'realtime'
           AND c.relname ~ '^messages_[0-9]{4}_[0-9]{2}_[0-9]{2}$'
         ORDER BY c.relname
    LOOP
        CONTINUE WHEN to_date(substr(child.relname, 10), 'YYYY_MM_DD') >= cutoff;
        EXECUTE format('DROP TABLE IF EXISTS realtime.%I', child.relname);
        dropped := dropped + 1;
    END LOOP;
    RETURN dropped;
END
$fn$;

REVOKE ALL ON FUNCTION realtime.create_messages_partitions(date, date) FROM PUBLIC;
REVOKE ALL ON FUNCTION realtime.drop_messages_partitions(interval) FROM PUBLIC;

-- Yesterday .. today + 3, as the server keeps them, so that realtime.send works right away.
DO $partitions$
BEGIN
    PERFORM realtime.create_messages_partitions(
        (timezone('utc', now()))::date - 1,
        (timezone('utc', now()))::date + 3);
END
$partitions$;

DO $publications$
DECLARE
    publication record;
BEGIN
    SELECT p.oid, p.pubviaroot, pg_catalog.pg_has_role(current_user, p.pubowner, 'USAGE') AS ours
      INTO publication
      FROM pg_catalog.pg_publication p
     WHERE p.pubname = 'supabase_realtime_messages_publication';
    IF NOT FOUND THEN
        BEGIN
            CREATE PUBLICATION supabase_realtime_messages_publication
                FOR TABLE realtime.messages WITH (publish_via_partition_root = true);
        EXCEPTION
            WHEN insufficient_privilege THEN
                -- Needs CREATE on the database and ownership of realtime.messages; broadcast from
                -- the database stays off until someone who may creates it.
                RAISE NOTICE 'cannot create publication supabase_realtime_messages_publication: %', SQLERRM;
        END;
    ELSIF NOT publication.ours THEN
        RAISE NOTICE 'publication supabase_realtime_messages_publication belongs to another role; left as is';
    ELSE
        IF NOT EXISTS (
            SELECT FROM pg_catalog.pg_publication_rel r
            WHERE r.prpubid = publication.oid AND r.prrelid = 'realtime.messages'::regclass
        ) THEN
            ALTER PUBLICATION supabase_realtime_messages_publication ADD TABLE realtime.messages;
        END IF;
        IF NOT publication.pubviaroot THEN
            ALTER PUBLICATION supabase_realtime_messages_publication SET (publish_via_partition_root = true);
        END IF;
    END IF;

    IF NOT EXISTS (SELECT FROM pg_catalog.pg_publication WHERE pubname = 'supabase_realtime') THEN
        BEGIN
            CREATE PUBLICATION supabase_realtime;
        EXCEPTION
            WHEN insufficient_privilege THEN
                RAISE NOTICE 'cannot create publication supabase_realtime: %', SQLERRM;
        END;
    END IF;
END
$publications$;

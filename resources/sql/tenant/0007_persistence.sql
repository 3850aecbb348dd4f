-- 0007 persistence and replay order: the columns broadcast persistence needs (realtime-js's
-- `persist`, upstream PR #2022) and an insertion order that replay sorts by.
--   skip_broadcast: a row the server stored itself after broadcasting the message; the WAL must
--       not broadcast it a second time (upstream's column, same name and default).
--   expires_at: when a persisted message's ttl ends (NULL: kept as long as its partition);
--       replay leaves expired rows out.
--   insertion_order: rising with every insert (a sequence), so that several realtime.send calls of
--       one transaction, which share inserted_at (now() is the transaction's start), replay in
--       call order (upstream #2201). Rows from before this migration have NULL and sort first.
-- Idempotent; every column is added only when missing, so a table Supabase's server created works.
ALTER TABLE realtime.messages ADD COLUMN IF NOT EXISTS skip_broadcast boolean NOT NULL DEFAULT false;
ALTER TABLE realtime.messages ADD COLUMN IF NOT EXISTS expires_at timestamp without time zone;

CREATE SEQUENCE IF NOT EXISTS realtime.messages_insertion_order;
-- realtime.send runs as its caller, and RLS checks insert as the JWT's role: every role that may
-- insert a message draws from the sequence.
GRANT USAGE ON SEQUENCE realtime.messages_insertion_order TO PUBLIC;
-- Without a default first and with it afterwards: existing rows are not rewritten.
ALTER TABLE realtime.messages ADD COLUMN IF NOT EXISTS insertion_order bigint;
ALTER TABLE realtime.messages
    ALTER COLUMN insertion_order SET DEFAULT nextval('realtime.messages_insertion_order');

-- Per-topic broadcast history for recovery on rejoin (qtrealtime; 0 turns it off).
ALTER TABLE _realtime.tenants ADD COLUMN IF NOT EXISTS history_size integer NOT NULL DEFAULT 100;
ALTER TABLE _realtime.tenants
    ADD COLUMN IF NOT EXISTS history_ttl_seconds integer NOT NULL DEFAULT 120;

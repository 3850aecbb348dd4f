-- Per-topic broadcast history for recovery on rejoin (qtrealtime; 0 turns it off).
ALTER TABLE tenants ADD COLUMN history_size integer NOT NULL DEFAULT 100;
ALTER TABLE tenants ADD COLUMN history_ttl_seconds integer NOT NULL DEFAULT 120;

-- Settings of the control plane itself, e.g. the value that proves the encryption key is right.
CREATE TABLE IF NOT EXISTS _realtime.qtrealtime_settings (
    name text PRIMARY KEY,
    value text NOT NULL
);

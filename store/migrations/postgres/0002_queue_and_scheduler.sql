-- session_queue_settings holds per-session queue overrides set with a
-- standalone /queue directive, as JSON opaque to the store (text, not
-- jsonb: the store hands back the bytes it was given).
CREATE TABLE session_queue_settings (
    session_key TEXT   PRIMARY KEY,
    settings    TEXT   NOT NULL,
    updated_at  BIGINT NOT NULL
);

-- scheduler_state keeps small named values of the heartbeat runner, JSON
-- opaque to the store.
CREATE TABLE scheduler_state (
    key        TEXT   PRIMARY KEY,
    value      TEXT   NOT NULL,
    updated_at BIGINT NOT NULL
);

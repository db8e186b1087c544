-- sessions is the sessions index: one row per session key, pointing at the
-- current transcript. The columns queries filter or sort on are columns;
-- everything else about a session is one JSON document (text, opaque to
-- the store), so adding a field does not need a migration.
CREATE TABLE sessions (
    key        TEXT   PRIMARY KEY,
    agent_id   TEXT   NOT NULL,
    session_id TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    data       TEXT   NOT NULL
);
CREATE INDEX sessions_by_updated ON sessions (updated_at DESC, key);

-- meta holds facts about the state store itself, such as when it was
-- created (created_at, unix milliseconds, written once by Open).
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

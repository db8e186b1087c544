-- The gateway's paired devices, pending pairing requests and device tokens
-- (see migrations/sqlite/0004_devices.sql for the reasons of each rule).
-- scopes are JSON arrays of strings, sorted and without duplicates.
CREATE TABLE devices (
    id            TEXT    PRIMARY KEY,
    public_key    TEXT    NOT NULL,
    role          TEXT    NOT NULL CHECK (role IN ('operator', 'node')),
    scopes        TEXT    NOT NULL CHECK (json_typeof(scopes::json) = 'array'),
    client_id     TEXT    NOT NULL DEFAULT '',
    client_mode   TEXT    NOT NULL DEFAULT '',
    platform      TEXT    NOT NULL DEFAULT '',
    device_family TEXT    NOT NULL DEFAULT '',
    display_name  TEXT    NOT NULL DEFAULT '',
    remote        BOOLEAN NOT NULL DEFAULT false,
    paired_at     BIGINT  NOT NULL,
    last_seen_at  BIGINT  NOT NULL DEFAULT 0
);

-- One pending request per device (device_id UNIQUE); device is the
-- requested Device as JSON, opaque to SQL.
CREATE TABLE pairing_requests (
    request_id TEXT   PRIMARY KEY,
    device_id  TEXT   NOT NULL UNIQUE,
    device     TEXT   NOT NULL,
    ip         TEXT   NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL
);

-- Only the sha256 of a token is stored; tokens die with their device
-- (ON DELETE CASCADE). seq breaks ties between tokens issued in the same
-- millisecond, for the per-device cap.
CREATE TABLE device_tokens (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY,
    token_hash TEXT   PRIMARY KEY,
    device_id  TEXT   NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    role       TEXT   NOT NULL,
    scopes     TEXT   NOT NULL CHECK (json_typeof(scopes::json) = 'array'),
    issued_at  BIGINT NOT NULL
);
CREATE INDEX device_tokens_by_device ON device_tokens (device_id, issued_at);

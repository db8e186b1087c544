-- devices holds the paired client devices: one row per Ed25519 identity the
-- operator (or loopback auto-approval) let in. id is the lowercase sha256 hex
-- of the raw public key, so a client cannot claim another device's row
-- without its private key; public_key is kept as the client sent it
-- (base64url or PEM) because the gateway verifies connect signatures with it.
--
-- scopes is a JSON array of strings, sorted and without duplicates: what the
-- device was granted, the ceiling for every token issued to it. Only role is
-- constrained here, because a role outside the two the protocol knows would
-- be a bug that grants nothing sensible; the set of scopes grows with the
-- protocol and is the gateway's to validate.
CREATE TABLE devices (
    id            TEXT    PRIMARY KEY,
    public_key    TEXT    NOT NULL,
    role          TEXT    NOT NULL CHECK (role IN ('operator', 'node')),
    scopes        TEXT    NOT NULL CHECK (json_type(scopes) = 'array'),
    client_id     TEXT    NOT NULL DEFAULT '',
    client_mode   TEXT    NOT NULL DEFAULT '',
    platform      TEXT    NOT NULL DEFAULT '',
    device_family TEXT    NOT NULL DEFAULT '',
    display_name  TEXT    NOT NULL DEFAULT '',
    remote        INTEGER NOT NULL DEFAULT 0 CHECK (remote IN (0, 1)),
    paired_at     INTEGER NOT NULL,
    last_seen_at  INTEGER NOT NULL DEFAULT 0
);

-- pairing_requests holds devices waiting for an operator's approval. A device
-- that reconnects while its request is pending must find the same request,
-- not add another, so device_id is UNIQUE: the operator sees one line per
-- device and the request id they were shown stays valid. device_id is not a
-- foreign key: most requests come from devices that are not paired yet, and a
-- paired device asking for a new role or more scopes (a repair) has both.
--
-- device is the requested Device (role, scopes asked for, client metadata) as
-- JSON, opaque to SQL: nothing filters on it, and approval copies it into
-- devices. Requests expire (the gateway prunes them by created_at after a few
-- minutes), so the table holds a handful of rows and needs no index beyond
-- its keys.
CREATE TABLE pairing_requests (
    request_id TEXT    PRIMARY KEY,
    device_id  TEXT    NOT NULL UNIQUE,
    device     TEXT    NOT NULL,
    ip         TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
);

-- device_tokens holds the device tokens handed out in hello-ok. Only the
-- sha256 hex of a token is stored: a copy of state.db, a backup or a stray
-- SELECT must not yield a credential. Tokens are 192 random bits, so an
-- unsalted hash is enough; and because lookup is by hash, the plain token is
-- never compared byte by byte, which is what would need constant time.
--
-- Tokens die with their device: ON DELETE CASCADE (foreign_keys is on for
-- every connection of the store) removes them in the same statement that
-- unpairs it, so no code path can forget to revoke them. A token's role and
-- scopes are what it was issued with; the store clamps them to the device's
-- current ones when the token is checked, so narrowing a device narrows its
-- live tokens too.
CREATE TABLE device_tokens (
    token_hash TEXT    PRIMARY KEY,
    device_id  TEXT    NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    role       TEXT    NOT NULL,
    scopes     TEXT    NOT NULL CHECK (json_type(scopes) = 'array'),
    issued_at  INTEGER NOT NULL
);

-- The cascade, revocation and the per-device cap on live tokens all find a
-- device's tokens by device_id; without this index each would scan every
-- token. issued_at orders them for the cap, which keeps the newest.
CREATE INDEX device_tokens_by_device ON device_tokens (device_id, issued_at);

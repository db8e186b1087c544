-- Direct-message access on chat platforms (see
-- migrations/sqlite/0005_channel_access.sql): pending pairing codes, and
-- the senders approved by pairing.
CREATE TABLE channel_pairing_codes (
    channel     TEXT   NOT NULL,
    account_id  TEXT   NOT NULL,
    code        TEXT   NOT NULL,
    sender_id   TEXT   NOT NULL,
    sender_name TEXT   NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (channel, code),
    UNIQUE (channel, account_id, sender_id)
);

CREATE TABLE channel_allowed_senders (
    channel     TEXT   NOT NULL,
    account_id  TEXT   NOT NULL,
    sender_id   TEXT   NOT NULL,
    sender_name TEXT   NOT NULL DEFAULT '',
    approved_at BIGINT NOT NULL,
    PRIMARY KEY (channel, account_id, sender_id)
);

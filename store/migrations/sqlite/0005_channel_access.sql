-- Direct-message access on chat platforms (openclaw-facts §4.4). A sender a
-- bridge does not know yet, under dmPolicy "pairing", gets a pairing code;
-- the owner approves the code and the sender joins the channel's approved
-- senders, which are merged with the configuration's allowFrom.
--
-- channel_pairing_codes holds the pending codes: at most a few per channel
-- and account (the bridges package enforces three), each valid for an hour.
-- A sender has at most one pending code per channel and account.
CREATE TABLE channel_pairing_codes (
    channel     TEXT    NOT NULL,
    account_id  TEXT    NOT NULL,
    code        TEXT    NOT NULL,
    sender_id   TEXT    NOT NULL,
    sender_name TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (channel, code),
    UNIQUE (channel, account_id, sender_id)
);

-- channel_allowed_senders holds the senders approved by pairing.
CREATE TABLE channel_allowed_senders (
    channel     TEXT    NOT NULL,
    account_id  TEXT    NOT NULL,
    sender_id   TEXT    NOT NULL,
    sender_name TEXT    NOT NULL DEFAULT '',
    approved_at INTEGER NOT NULL,
    PRIMARY KEY (channel, account_id, sender_id)
);

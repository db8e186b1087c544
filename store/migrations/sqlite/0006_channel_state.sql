-- Per-bridge delivery state.
--
-- channel_offsets keeps where a bridge's platform stream was read up to
-- (Telegram's next getUpdates offset), written only after the messages
-- before it were journaled, so a restart neither skips nor (thanks to the
-- journal's dedupe) answers twice.
CREATE TABLE channel_offsets (
    channel    TEXT    NOT NULL,
    account_id TEXT    NOT NULL,
    value      TEXT    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (channel, account_id)
);

-- outbound_ledger records each reply chunk a bridge sent: the key names the
-- intent (run, reply, chunk), message_id what the platform assigned. A
-- delivery repeated after a crash skips the keys already here.
CREATE TABLE outbound_ledger (
    key        TEXT    PRIMARY KEY,
    message_id TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX outbound_ledger_created ON outbound_ledger (created_at);

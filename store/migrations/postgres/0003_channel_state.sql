-- Per-bridge delivery state (see migrations/sqlite/0006_channel_state.sql).
--
-- channel_offsets keeps where a bridge's platform stream was read up to,
-- written only after the messages before it were journaled.
CREATE TABLE channel_offsets (
    channel    TEXT   NOT NULL,
    account_id TEXT   NOT NULL,
    value      TEXT   NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (channel, account_id)
);

-- outbound_ledger records each reply chunk a bridge sent: the key names
-- the intent (run, reply, chunk), message_id what the platform assigned.
CREATE TABLE outbound_ledger (
    key        TEXT   PRIMARY KEY,
    message_id TEXT   NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX outbound_ledger_created ON outbound_ledger (created_at);

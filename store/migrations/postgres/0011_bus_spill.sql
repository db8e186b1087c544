-- bus_spill holds the cluster bus messages too large for a NOTIFY payload
-- (under 8,000 bytes): the notice carries the row's id instead. Rows are
-- read within moments and deleted after five minutes.
CREATE TABLE bus_spill (
    id         BIGSERIAL PRIMARY KEY,
    payload    TEXT   NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX bus_spill_created ON bus_spill (created_at);

-- Leases and the instance registry (store.Leases, store.Instances).
--
-- leases holds named rights with a fencing token: fence increases every
-- time a lease changes hands, and a journal write carrying a fence commits
-- only while the lease is still at it. owner is '' once released. Times
-- are unix milliseconds.
CREATE TABLE leases (
    name        TEXT    PRIMARY KEY,
    owner       TEXT    NOT NULL,
    fence       BIGINT  NOT NULL,
    acquired_at BIGINT  NOT NULL,
    expires_at  BIGINT  NOT NULL
);

-- instances records each running process (one row per start) and its last
-- heartbeat, for `switchboard cluster status`. info is JSON opaque to the
-- store.
CREATE TABLE instances (
    id           TEXT    PRIMARY KEY,
    name         TEXT    NOT NULL,
    info         TEXT    NOT NULL,
    started_at   BIGINT  NOT NULL,
    heartbeat_at BIGINT  NOT NULL,
    stopped_at   BIGINT  NOT NULL DEFAULT 0
);

-- transcript_lines keeps session transcripts in postgres mode, so any
-- instance can run any session: one encoded message per row, in seq order
-- per (agent, session), the same lines a JSONL transcript file holds. The
-- primary key refuses a second writer appending at a position already
-- taken.
CREATE TABLE transcript_lines (
    agent_id   TEXT   NOT NULL,
    session_id TEXT   NOT NULL,
    seq        BIGINT NOT NULL,
    line       TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (agent_id, session_id, seq)
);

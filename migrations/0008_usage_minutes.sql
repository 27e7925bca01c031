-- What each agent stored, summed per minute, for the daily storage quota
-- (max_bytes_per_agent_per_day). Assent reads it at start instead of every proposal of the
-- last day, which at a million proposals a day meant reading the whole database before the
-- inbox could open. A minute's bytes count until its last proposal is a day old.
CREATE TABLE usage_minutes (
    agent   TEXT NOT NULL,
    minute  INTEGER NOT NULL,  -- created_at / 60000
    bytes   INTEGER NOT NULL,  -- payload and stored preview of that minute's proposals
    last_at INTEGER NOT NULL,  -- the latest created_at among them
    PRIMARY KEY (agent, minute)
) WITHOUT ROWID;

-- Every proposal stored counts, withdrawn or rejected later or not: the table only grows
-- with inserts (an upsert on the minute's row).
CREATE TRIGGER proposals_count_usage AFTER INSERT ON proposals
BEGIN
    INSERT INTO usage_minutes (agent, minute, bytes, last_at)
    VALUES (NEW.agent, NEW.created_at / 60000,
            length(CAST(NEW.payload AS BLOB)) + length(CAST(NEW.preview AS BLOB)), NEW.created_at)
    ON CONFLICT (agent, minute) DO UPDATE
        SET bytes = bytes + excluded.bytes, last_at = max(last_at, excluded.last_at);
END;

-- An agent's first proposal in a new minute forgets its minutes older than a day and a minute.
CREATE TRIGGER usage_minutes_forget AFTER INSERT ON usage_minutes
BEGIN
    DELETE FROM usage_minutes WHERE agent = NEW.agent AND minute < NEW.minute - 1441;
END;

-- The last day of a database made before this table.
INSERT INTO usage_minutes (agent, minute, bytes, last_at)
SELECT agent, created_at / 60000,
       sum(length(CAST(payload AS BLOB)) + length(CAST(preview AS BLOB))), max(created_at)
FROM proposals
WHERE created_at >= (CAST(strftime('%s', 'now') AS INTEGER) - 86400) * 1000
GROUP BY agent, created_at / 60000;

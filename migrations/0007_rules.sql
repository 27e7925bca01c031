-- Rules: what may run without asking and what is always refused. A rule is removed by deleting
-- its row; the rule log keeps what every rule was, append-only, like the audit log.
CREATE TABLE rules (
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
    id               TEXT NOT NULL UNIQUE,
    effect           TEXT NOT NULL CHECK (effect IN ('allow', 'ask', 'deny')),
    match            TEXT NOT NULL,           -- JSON {agent?, kind?, tool?, input?, path?, method?, host?, credential?}
    everything       INTEGER NOT NULL DEFAULT 0 CHECK (everything IN (0, 1)),
    note             TEXT,
    created_by       TEXT NOT NULL,
    created_channel  TEXT NOT NULL,
    created_at       INTEGER NOT NULL,
    expires_at       INTEGER,
    matched          INTEGER NOT NULL DEFAULT 0  -- proposals it decided (or sent to the inbox, for ask)
) STRICT;

CREATE TABLE rule_log (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    rule_id  TEXT NOT NULL,
    event    TEXT NOT NULL CHECK (event IN ('added', 'removed')),
    actor    TEXT NOT NULL,
    channel  TEXT NOT NULL,
    at       INTEGER NOT NULL,
    rule     TEXT NOT NULL                     -- JSON: the rule as it was, in words too
) STRICT;
CREATE INDEX rule_log_rule ON rule_log(rule_id, seq);
CREATE TRIGGER rule_log_is_append_only_update BEFORE UPDATE ON rule_log
BEGIN
    SELECT RAISE(ABORT, 'the rule log is append-only');
END;
CREATE TRIGGER rule_log_is_append_only_delete BEFORE DELETE ON rule_log
BEGIN
    SELECT RAISE(ABORT, 'the rule log is append-only');
END;

-- What rules see of a proposal (its tool, command, path, method, host, credential), kept so the
-- Rules page can say how many recent proposals a rule would have matched without reading
-- payloads. Cleared with the content at the retention.
ALTER TABLE proposals ADD COLUMN facts TEXT;

-- Who filed a proposal when it was not the agent itself: the person retrying a failed write
-- (through the app, the CLI or another owner-API client). Its first audit row credits them.
ALTER TABLE proposals ADD COLUMN created_by TEXT;
ALTER TABLE proposals ADD COLUMN created_channel TEXT;

DROP TRIGGER audit_proposal_created;
CREATE TRIGGER audit_proposal_created AFTER INSERT ON proposals
BEGIN
    INSERT INTO audit (proposal_id, actor, channel, from_status, to_status, at, detail)
    VALUES (NEW.id, COALESCE(NEW.created_by, NEW.agent), COALESCE(NEW.created_channel, 'agent'), NULL,
            NEW.status, NEW.created_at, json_object('kind', NEW.kind));
END;

-- What happened to each agent name, append-only: added, revoked, reused. A revoked name's
-- proposals stay under that name; giving the name a new token (reuse) is recorded, and the
-- revocation before it stays.
CREATE TABLE agent_log (
    seq    INTEGER PRIMARY KEY AUTOINCREMENT,
    name   TEXT NOT NULL,
    event  TEXT NOT NULL CHECK (event IN ('added', 'revoked', 'reused')),
    at     INTEGER NOT NULL
) STRICT;
CREATE INDEX agent_log_name ON agent_log(name, seq);
CREATE TRIGGER agent_log_is_append_only_update BEFORE UPDATE ON agent_log
BEGIN
    SELECT RAISE(ABORT, 'the agent log is append-only');
END;
CREATE TRIGGER agent_log_is_append_only_delete BEFORE DELETE ON agent_log
BEGIN
    SELECT RAISE(ABORT, 'the agent log is append-only');
END;
-- Agents that exist already count as added when they were.
INSERT INTO agent_log (name, event, at) SELECT name, 'added', created_at FROM agents;
INSERT INTO agent_log (name, event, at) SELECT name, 'revoked', revoked_at FROM agents WHERE revoked_at IS NOT NULL;

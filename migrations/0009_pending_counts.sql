-- Each agent's pending proposals, counted as they change: the pending limit
-- (max_pending_per_agent) reads one row instead of counting on an index of every proposal by
-- agent. That index, (agent, status, seq), kept each agent's entries apart, so a commit of
-- proposals from many agents rewrote one of its pages per agent, for a count that is now kept
-- here; nothing else read it (a list filtered by agent walks the proposals newest first).
CREATE TABLE pending_counts (
    agent TEXT PRIMARY KEY NOT NULL,
    n     INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

INSERT INTO pending_counts (agent, n)
SELECT agent, COUNT(*) FROM proposals WHERE status = 'pending' GROUP BY agent;

CREATE TRIGGER pending_counts_insert AFTER INSERT ON proposals WHEN NEW.status = 'pending'
BEGIN
    INSERT INTO pending_counts (agent, n) VALUES (NEW.agent, 1)
    ON CONFLICT (agent) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER pending_counts_leave AFTER UPDATE OF status ON proposals
WHEN OLD.status = 'pending' AND NEW.status != 'pending'
BEGIN
    UPDATE pending_counts SET n = n - 1 WHERE agent = OLD.agent;
END;

CREATE TRIGGER pending_counts_return AFTER UPDATE OF status ON proposals
WHEN OLD.status != 'pending' AND NEW.status = 'pending'
BEGIN
    INSERT INTO pending_counts (agent, n) VALUES (NEW.agent, 1)
    ON CONFLICT (agent) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER pending_counts_delete AFTER DELETE ON proposals WHEN OLD.status = 'pending'
BEGIN
    UPDATE pending_counts SET n = n - 1 WHERE agent = OLD.agent;
END;

DROP INDEX proposals_agent;

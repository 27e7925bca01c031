-- A session's proposals, listed and counted by session. See migrations/0014_sessions.sql.
CREATE INDEX proposals_session ON proposals (session_id, agent) WHERE session_id IS NOT NULL;

-- A session's proposals (an agent's conversation or task), listed and counted by session:
-- `GET /v1/proposals?session_id=` and `GET /v1/sessions/{id}`.
CREATE INDEX proposals_session ON proposals(session_id, agent) WHERE session_id IS NOT NULL;

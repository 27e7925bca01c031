-- Assent's schema. Never edit a migration that has landed: add a new file instead.

-- Agents that may propose. Only a SHA-256 of each token is stored.
CREATE TABLE agents (
    name        TEXT PRIMARY KEY NOT NULL,
    token_hash  BLOB NOT NULL,
    created_at  INTEGER NOT NULL,            -- ms since the Unix epoch
    revoked_at  INTEGER                      -- set once revoked; the row stays for history
) STRICT;
CREATE UNIQUE INDEX agents_token_hash ON agents(token_hash);

-- Proposals. `payload` is stored once and never changed; `seq` orders them and backs the
-- list cursor.
CREATE TABLE proposals (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT NOT NULL UNIQUE,
    kind            TEXT NOT NULL,
    class           TEXT NOT NULL CHECK (class IN ('decision_only', 'applied')),
    agent           TEXT NOT NULL REFERENCES agents(name),
    title           TEXT,
    summary         TEXT,
    payload         TEXT NOT NULL,           -- JSON
    preview         TEXT NOT NULL,           -- JSON, computed by Assent from payload
    base            TEXT,                    -- JSON snapshot of the target at proposal time
    session_id      TEXT,
    group_id        TEXT,
    supersedes      TEXT,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'applying', 'applied',
                        'failed', 'rejected', 'refined', 'expired', 'withdrawn')),
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    decision        TEXT,                    -- JSON
    result          TEXT,                    -- JSON
    error           TEXT,                    -- JSON {code, message}
    idempotency_key TEXT,
    request_sha256  TEXT
) STRICT;
CREATE UNIQUE INDEX proposals_idempotency ON proposals(agent, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX proposals_status ON proposals(status, seq);
CREATE INDEX proposals_agent ON proposals(agent, status, seq);
CREATE INDEX proposals_group ON proposals(group_id, seq) WHERE group_id IS NOT NULL;
CREATE INDEX proposals_pending_expiry ON proposals(expires_at) WHERE status = 'pending';

-- Every status change, append-only.
CREATE TABLE audit (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    proposal_id  TEXT NOT NULL REFERENCES proposals(id),
    actor        TEXT NOT NULL,
    channel      TEXT NOT NULL,
    from_status  TEXT,
    to_status    TEXT NOT NULL,
    at           INTEGER NOT NULL,
    detail       TEXT                        -- JSON
) STRICT;
CREATE INDEX audit_proposal ON audit(proposal_id, seq);

CREATE TRIGGER audit_is_append_only_update BEFORE UPDATE ON audit
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
CREATE TRIGGER audit_is_append_only_delete BEFORE DELETE ON audit
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;

-- The stored payload never changes.
CREATE TRIGGER proposals_payload_is_immutable BEFORE UPDATE OF payload, preview, kind, agent, base ON proposals
BEGIN
    SELECT RAISE(ABORT, 'a proposal''s payload, preview, kind, agent and base never change');
END;

-- Assent's team store on PostgreSQL: several Assent servers ("nodes") share one database.
-- Never edit a migration that has landed: add a new file instead.
--
-- Times are milliseconds since the Unix epoch; JSON is kept as the text Assent wrote, byte for
-- byte (the payload's hash is over its canonical form, so the text is what counts).

-- The nodes that have used this database, and the advisory lock key each holds while it runs
-- (a second server with the same node name cannot take it and refuses to start).
CREATE TABLE nodes (
    name        TEXT PRIMARY KEY,
    first_seen  BIGINT NOT NULL,
    last_start  BIGINT NOT NULL,
    person      TEXT NOT NULL
);

-- Agents belong to a node: a token is only ever good on the node that issued it.
CREATE TABLE agents (
    node        TEXT NOT NULL,
    name        TEXT NOT NULL,
    token_hash  BYTEA NOT NULL,
    created_at  BIGINT NOT NULL,
    revoked_at  BIGINT,
    PRIMARY KEY (node, name)
);
CREATE UNIQUE INDEX agents_token_hash ON agents (token_hash);

CREATE TABLE agent_log (
    seq    BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    node   TEXT NOT NULL,
    name   TEXT NOT NULL,
    event  TEXT NOT NULL CHECK (event IN ('added', 'revoked', 'reused')),
    at     BIGINT NOT NULL
);
CREATE INDEX agent_log_name ON agent_log (node, name, seq);

-- Proposals of the whole team. `node` received it and is the only one that applies it.
CREATE TABLE proposals (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    node            TEXT NOT NULL,
    kind            TEXT NOT NULL,
    class           TEXT NOT NULL CHECK (class IN ('decision_only', 'applied')),
    agent           TEXT NOT NULL,
    title           TEXT,
    summary         TEXT,
    payload         TEXT NOT NULL,
    preview         TEXT NOT NULL,
    base            TEXT,
    session_id      TEXT,
    group_id        TEXT,
    supersedes      TEXT,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'applying', 'applied',
                        'failed', 'rejected', 'refined', 'expired', 'withdrawn')),
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL,
    decision        TEXT,
    result          TEXT,
    error           TEXT,
    idempotency_key TEXT,
    request_sha256  TEXT,
    pruned_at       BIGINT,
    created_by      TEXT,
    created_channel TEXT,
    facts           TEXT,
    FOREIGN KEY (node, agent) REFERENCES agents (node, name)
);
CREATE UNIQUE INDEX proposals_idempotency ON proposals (node, agent, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX proposals_status ON proposals (status, seq);
CREATE INDEX proposals_agent ON proposals (node, agent, status, seq);
CREATE INDEX proposals_agent_name ON proposals (agent, seq);
CREATE INDEX proposals_group ON proposals (group_id, seq) WHERE group_id IS NOT NULL;
CREATE INDEX proposals_pending_expiry ON proposals (expires_at) WHERE status = 'pending';
CREATE INDEX proposals_supersedes ON proposals (supersedes) WHERE supersedes IS NOT NULL;
CREATE INDEX proposals_unsettled ON proposals (node, seq) WHERE status IN ('approved', 'applying');
CREATE INDEX proposals_created ON proposals (created_at);

-- Every status change, append-only, with the node it was made on.
CREATE TABLE audit (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    proposal_id  TEXT NOT NULL REFERENCES proposals (id),
    node         TEXT NOT NULL,
    actor        TEXT NOT NULL,
    channel      TEXT NOT NULL,
    from_status  TEXT,
    to_status    TEXT NOT NULL,
    at           BIGINT NOT NULL,
    detail       TEXT
);
CREATE INDEX audit_proposal ON audit (proposal_id, seq);

CREATE FUNCTION assent_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the % is append-only', TG_ARGV[0];
END $$;
CREATE TRIGGER audit_is_append_only BEFORE UPDATE OR DELETE ON audit
    FOR EACH ROW EXECUTE FUNCTION assent_append_only('audit log');
CREATE TRIGGER audit_is_not_truncated BEFORE TRUNCATE ON audit
    FOR EACH STATEMENT EXECUTE FUNCTION assent_append_only('audit log');
CREATE TRIGGER agent_log_is_append_only BEFORE UPDATE OR DELETE ON agent_log
    FOR EACH ROW EXECUTE FUNCTION assent_append_only('agent log');
CREATE TRIGGER agent_log_is_not_truncated BEFORE TRUNCATE ON agent_log
    FOR EACH STATEMENT EXECUTE FUNCTION assent_append_only('agent log');
REVOKE UPDATE, DELETE, TRUNCATE ON audit, agent_log FROM PUBLIC;

-- The stored payload never changes, but once, when a settled proposal is pruned.
CREATE FUNCTION assent_payload_is_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.kind IS DISTINCT FROM OLD.kind OR NEW.agent IS DISTINCT FROM OLD.agent
       OR NEW.node IS DISTINCT FROM OLD.node THEN
        RAISE EXCEPTION 'a proposal''s kind, agent and node never change';
    END IF;
    IF (NEW.payload IS DISTINCT FROM OLD.payload OR NEW.preview IS DISTINCT FROM OLD.preview
        OR NEW.base IS DISTINCT FROM OLD.base)
       AND NOT (OLD.pruned_at IS NULL AND NEW.pruned_at IS NOT NULL
                AND (OLD.status IN ('applied', 'failed', 'rejected', 'refined', 'expired', 'withdrawn')
                     OR (OLD.status = 'approved' AND OLD.class = 'decision_only'))) THEN
        RAISE EXCEPTION 'a proposal''s payload, preview and base never change (but once, when a settled one is pruned)';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER proposals_payload_is_immutable BEFORE UPDATE ON proposals
    FOR EACH ROW EXECUTE FUNCTION assent_payload_is_immutable();

-- `assent store copy` moves a single user's SQLite history into the team database in one
-- transaction that sets `assent.copying`: its proposals bring their own audit trail, so the
-- insert trigger adds no first audit row then, and nothing is announced to the other nodes
-- (they read the copied history like any other, and none of it is pending their action).
CREATE FUNCTION assent_copying() RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT current_setting('assent.copying', true) IS NOT DISTINCT FROM 'on'
$$;

-- A new proposal's first audit row, written by the same statement (none for a copied one).
CREATE FUNCTION assent_audit_created() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF assent_copying() THEN
        RETURN NULL;
    END IF;
    INSERT INTO audit (proposal_id, node, actor, channel, from_status, to_status, at, detail)
    VALUES (NEW.id, NEW.node, COALESCE(NEW.created_by, NEW.agent), COALESCE(NEW.created_channel, 'agent'), NULL,
            NEW.status, NEW.created_at, json_build_object('kind', NEW.kind)::text);
    RETURN NULL;
END $$;
CREATE TRIGGER audit_proposal_created AFTER INSERT ON proposals
    FOR EACH ROW EXECUTE FUNCTION assent_audit_created();

-- Every audit row tells the other nodes, when its transaction commits: "id from to node".
CREATE FUNCTION assent_announce() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF assent_copying() THEN
        RETURN NULL;
    END IF;
    PERFORM pg_notify('assent_proposals',
        NEW.proposal_id || ' ' || COALESCE(NEW.from_status, '-') || ' ' || NEW.to_status || ' ' || NEW.node);
    RETURN NULL;
END $$;
CREATE TRIGGER audit_announced AFTER INSERT ON audit
    FOR EACH ROW EXECUTE FUNCTION assent_announce();

-- Credentials' metadata, per node (each node's secrets are in its own keychain).
CREATE TABLE credentials (
    node        TEXT NOT NULL,
    name        TEXT NOT NULL,
    scheme      TEXT NOT NULL,
    origins     TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (node, name)
);

-- Rules are the team's; each records the node it was made on.
CREATE TABLE rules (
    seq              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    node             TEXT NOT NULL,
    effect           TEXT NOT NULL CHECK (effect IN ('allow', 'ask', 'deny')),
    match            TEXT NOT NULL,
    everything       BOOLEAN NOT NULL DEFAULT FALSE,
    note             TEXT,
    created_by       TEXT NOT NULL,
    created_channel  TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    expires_at       BIGINT,
    matched          BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE rule_log (
    seq      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    rule_id  TEXT NOT NULL,
    node     TEXT NOT NULL,
    event    TEXT NOT NULL CHECK (event IN ('added', 'removed')),
    actor    TEXT NOT NULL,
    channel  TEXT NOT NULL,
    at       BIGINT NOT NULL,
    rule     TEXT NOT NULL
);
CREATE INDEX rule_log_rule ON rule_log (rule_id, seq);
CREATE TRIGGER rule_log_is_append_only BEFORE UPDATE OR DELETE ON rule_log
    FOR EACH ROW EXECUTE FUNCTION assent_append_only('rule log');
CREATE TRIGGER rule_log_is_not_truncated BEFORE TRUNCATE ON rule_log
    FOR EACH STATEMENT EXECUTE FUNCTION assent_append_only('rule log');
REVOKE UPDATE, DELETE, TRUNCATE ON rule_log FROM PUBLIC;

CREATE FUNCTION assent_announce_rules() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF assent_copying() THEN
        RETURN NULL;
    END IF;
    PERFORM pg_notify('assent_rules', NEW.rule_id || ' ' || NEW.node);
    RETURN NULL;
END $$;
CREATE TRIGGER rule_log_announced AFTER INSERT ON rule_log
    FOR EACH ROW EXECUTE FUNCTION assent_announce_rules();

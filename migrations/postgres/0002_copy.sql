-- `assent store copy` moves a single user's SQLite history into the team database in one
-- transaction that sets `assent.copying`: its proposals bring their own audit trail, so the
-- insert trigger adds no first audit row then, and nothing is announced to the other nodes
-- (they read the copied history like any other, and none of it is pending their action).
CREATE OR REPLACE FUNCTION assent_audit_created() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('assent.copying', true) = 'on' THEN
        RETURN NULL;
    END IF;
    INSERT INTO audit (proposal_id, node, actor, channel, from_status, to_status, at, detail)
    VALUES (NEW.id, NEW.node, COALESCE(NEW.created_by, NEW.agent), COALESCE(NEW.created_channel, 'agent'), NULL,
            NEW.status, NEW.created_at, json_build_object('kind', NEW.kind)::text);
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION assent_announce() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('assent.copying', true) = 'on' THEN
        RETURN NULL;
    END IF;
    PERFORM pg_notify('assent_proposals',
        NEW.proposal_id || ' ' || COALESCE(NEW.from_status, '-') || ' ' || NEW.to_status || ' ' || NEW.node);
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION assent_announce_rules() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('assent.copying', true) = 'on' THEN
        RETURN NULL;
    END IF;
    PERFORM pg_notify('assent_rules', NEW.rule_id || ' ' || NEW.node);
    RETURN NULL;
END $$;

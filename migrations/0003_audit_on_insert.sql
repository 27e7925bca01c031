-- The audit row of a new proposal is written by the same statement that inserts it, so a new
-- proposal is one atomic statement: the store's writer needs no savepoint and no second round
-- trip for it, and no proposal can exist without its first audit row.
CREATE TRIGGER audit_proposal_created AFTER INSERT ON proposals
BEGIN
    INSERT INTO audit (proposal_id, actor, channel, from_status, to_status, at, detail)
    VALUES (NEW.id, NEW.agent, 'agent', NULL, NEW.status, NEW.created_at, json_object('kind', NEW.kind));
END;

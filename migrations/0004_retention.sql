-- Retention: a settled proposal's bulky content (payload, preview, response body) may be
-- replaced by its figures once the retention has passed; `pruned_at` says when. Its status,
-- decision, audit trail and hashes stay for ever.
ALTER TABLE proposals ADD COLUMN pruned_at INTEGER;

-- The stored payload still never changes, but for that one step: the update that prunes a
-- settled proposal (and sets `pruned_at`), once. Kind and agent never change at all.
DROP TRIGGER proposals_payload_is_immutable;
CREATE TRIGGER proposals_payload_is_immutable BEFORE UPDATE OF payload, preview, kind, agent, base ON proposals
WHEN NOT (
    OLD.pruned_at IS NULL AND NEW.pruned_at IS NOT NULL
    AND NEW.kind = OLD.kind AND NEW.agent = OLD.agent
    AND (OLD.status IN ('applied', 'failed', 'rejected', 'refined', 'expired', 'withdrawn')
         OR (OLD.status = 'approved' AND OLD.class = 'decision_only'))
)
BEGIN
    SELECT RAISE(ABORT, 'a proposal''s payload, preview, kind, agent and base never change (but once, when a settled one is pruned)');
END;

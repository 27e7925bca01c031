-- The pending proposals that carry a lease, found at start-up without reading every pending
-- proposal (an inbox of a million took seconds to start).
CREATE INDEX proposals_pending_leased ON proposals(node) WHERE status = 'pending' AND lease_secs IS NOT NULL;

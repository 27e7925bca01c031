-- The pending proposals that carry a lease, found at start-up without reading every pending
-- proposal. See migrations/0015_pending_leases.sql.
CREATE INDEX proposals_pending_leased ON proposals (node) WHERE status = 'pending' AND lease_secs IS NOT NULL;

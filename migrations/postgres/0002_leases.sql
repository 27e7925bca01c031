-- A proposal's lease, in seconds: while it is pending, the node that received it withdraws it
-- once its agent has neither waited for the answer nor read it for this long (NULL: it waits
-- until it expires). See migrations/0010_leases.sql.
ALTER TABLE proposals ADD COLUMN lease_secs BIGINT CHECK (lease_secs IS NULL OR lease_secs > 0);

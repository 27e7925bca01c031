-- A proposal's lease, in seconds: while it is pending, Assent withdraws it once its agent has
-- neither waited for the answer nor read it for this long (NULL: it waits until it expires).
-- The lease itself is kept in memory by the server that received the proposal; this column lets
-- a restarted server give each pending leased proposal a whole lease again.
ALTER TABLE proposals ADD COLUMN lease_secs INTEGER CHECK (lease_secs IS NULL OR lease_secs > 0);

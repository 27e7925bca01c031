-- Receipts: a proposal's audience and the public keys that sign receipts, every node's. See
-- migrations/0013_receipts.sql.
ALTER TABLE proposals ADD COLUMN audience TEXT CHECK (audience IS NULL OR char_length(audience) BETWEEN 1 AND 200);

CREATE TABLE receipt_keys (
    kid            TEXT PRIMARY KEY,
    node           TEXT NOT NULL,
    x              TEXT NOT NULL,
    added_at       BIGINT NOT NULL,
    retired_at     BIGINT,
    publish_until  BIGINT,
    CHECK ((retired_at IS NULL) = (publish_until IS NULL))
);
CREATE INDEX receipt_keys_node ON receipt_keys(node);

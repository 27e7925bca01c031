-- Receipts (decisions signed so a tool server can check them offline).

-- Who a proposal's decision receipt is for (the tool server or API that will check it): the
-- receipt's `aud` claim. NULL: the receipt names no audience.
ALTER TABLE proposals ADD COLUMN audience TEXT CHECK (audience IS NULL OR length(audience) BETWEEN 1 AND 200);

-- The public keys that sign receipts, as `GET /v1/keys` publishes them: each node's current
-- key (publish_until NULL), and the ones it retired, published until the last receipt they
-- signed expires. The private halves are in the keychain, never here.
CREATE TABLE receipt_keys (
    kid            TEXT PRIMARY KEY,        -- RFC 7638 thumbprint
    node           TEXT NOT NULL DEFAULT '',
    x              TEXT NOT NULL,           -- the Ed25519 public key, base64url
    added_at       INTEGER NOT NULL,
    retired_at     INTEGER,
    publish_until  INTEGER,
    CHECK ((retired_at IS NULL) = (publish_until IS NULL))
);
CREATE INDEX receipt_keys_node ON receipt_keys(node);

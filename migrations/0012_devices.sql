-- Devices paired to answer from (a phone's passkey), per node ('' in a store of one's own).
-- The passkey is the WebAuthn library's record of the device's public key and signature
-- counter, as JSON: nothing in it is secret. A revoked device stays, named by what it decided.
CREATE TABLE devices (
    node           TEXT NOT NULL DEFAULT '',
    name           TEXT NOT NULL,
    credential_id  TEXT NOT NULL,
    passkey        TEXT NOT NULL,
    added_at       INTEGER NOT NULL,
    last_used_at   INTEGER,
    revoked_at     INTEGER,
    PRIMARY KEY (node, name)
);
CREATE UNIQUE INDEX devices_credential ON devices(credential_id);

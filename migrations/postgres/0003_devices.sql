-- Devices paired to answer from (a phone's passkey), per node. See migrations/0012_devices.sql.
CREATE TABLE devices (
    node           TEXT NOT NULL,
    name           TEXT NOT NULL,
    credential_id  TEXT NOT NULL,
    passkey        TEXT NOT NULL,
    added_at       BIGINT NOT NULL,
    last_used_at   BIGINT,
    revoked_at     BIGINT,
    PRIMARY KEY (node, name)
);
CREATE UNIQUE INDEX devices_credential ON devices (credential_id);

-- Devices paired to answer from (a phone's passkey), per node. See migrations/0012_devices.sql.
CREATE TABLE devices (
    node           TEXT NOT NULL,
    name           TEXT NOT NULL,
    credential_id  TEXT NOT NULL,
    passkey        TEXT NOT NULL,
    added_at       BIGINT NOT NULL,
    last_used_at   BIGINT,
    revoked_at     BIGINT,
    push           TEXT,
    PRIMARY KEY (node, name)
);
CREATE UNIQUE INDEX devices_credential ON devices (credential_id);

-- What happened at each node's remote listener, append-only. See migrations/0012_devices.sql.
CREATE TABLE remote_log (
    seq     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    node    TEXT NOT NULL,
    device  TEXT NOT NULL,
    event   TEXT NOT NULL,
    at      BIGINT NOT NULL,
    detail  TEXT
);
CREATE TRIGGER remote_log_is_append_only BEFORE UPDATE OR DELETE ON remote_log
    FOR EACH ROW EXECUTE FUNCTION assent_append_only('remote log');
CREATE TRIGGER remote_log_is_not_truncated BEFORE TRUNCATE ON remote_log
    FOR EACH STATEMENT EXECUTE FUNCTION assent_append_only('remote log');
REVOKE UPDATE, DELETE, TRUNCATE ON remote_log FROM PUBLIC;

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
    push           TEXT,                    -- JSON: the Web Push subscription, if any
    PRIMARY KEY (node, name)
);
CREATE UNIQUE INDEX devices_credential ON devices(credential_id);

-- What happened at the remote listener, append-only: devices paired and revoked, and every
-- refused attempt (a wrong pairing code, a login or decision that did not verify, a lockout).
-- `device` is '' when no device is known; `detail` is JSON (the refusal's code).
CREATE TABLE remote_log (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    node    TEXT NOT NULL DEFAULT '',
    device  TEXT NOT NULL,
    event   TEXT NOT NULL,
    at      INTEGER NOT NULL,
    detail  TEXT
);
CREATE TRIGGER remote_log_is_append_only_update BEFORE UPDATE ON remote_log
BEGIN
    SELECT RAISE(ABORT, 'the remote log is append-only');
END;
CREATE TRIGGER remote_log_is_append_only_delete BEFORE DELETE ON remote_log
BEGIN
    SELECT RAISE(ABORT, 'the remote log is append-only');
END;

-- Credentials: only metadata. The secret itself lives in the system keychain.
CREATE TABLE credentials (
    name        TEXT PRIMARY KEY NOT NULL,
    scheme      TEXT NOT NULL,               -- JSON, e.g. {"type":"bearer"}
    origins     TEXT NOT NULL,               -- JSON list of scheme://host:port
    created_at  INTEGER NOT NULL
) STRICT;


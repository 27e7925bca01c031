//! Every statement of both stores, written once: the same text runs on SQLite and PostgreSQL
//! (`$n` placeholders, `RETURNING`, `ON CONFLICT`, `CAST`), and a [`Twin`] only where the
//! databases truly differ, each with its reason. The team store's node is always the argument
//! after the others a statement needs; a store of one's own passes '' (its rows' node).

/// A statement each database says its own way.
pub(crate) struct Twin {
    pub lite: &'static str,
    pub pg: &'static str,
}

impl Twin {
    pub(crate) fn pick(&self, pg: bool) -> &'static str {
        if pg { self.pg } else { self.lite }
    }
}

/// The columns `rows::proposal` reads (and `seq`, for keyset paging).
macro_rules! proposal_cols {
    () => {
        "seq, id, node, kind, class, agent, title, summary, payload, preview, base, session_id, group_id, \
         supersedes, status, created_at, updated_at, expires_at, lease_secs, audience, decision, result, error, pruned_at"
    };
}
/// The columns `rows::audit` reads.
macro_rules! audit_cols {
    () => {
        "seq, proposal_id, node, actor, channel, from_status, to_status, at, detail"
    };
}
/// The columns `rows::rule` reads (and `seq`).
macro_rules! rule_cols {
    () => {
        "seq, id, node, effect, match, everything, note, created_by, created_channel, created_at, expires_at, \
         matched"
    };
}

// Reads.
pub(crate) const PROPOSAL: &str = concat!("SELECT ", proposal_cols!(), " FROM proposals WHERE id = $1");
/// The inbox; `list` adds only the filters asked for, so that the planner picks their index.
pub(crate) const LIST: &str = concat!("SELECT ", proposal_cols!(), " FROM proposals WHERE TRUE");
/// [`LIST`]'s columns as a list shows proposals: the stored gist instead of the payload and
/// preview, which are read only where there is no gist (filed before it was kept, or pruned).
macro_rules! row_cols {
    () => {
        "seq, id, node, kind, class, agent, title, summary, \
         CASE WHEN gist IS NULL THEN payload END AS payload, CASE WHEN gist IS NULL THEN preview END AS preview, gist, \
         base, session_id, group_id, supersedes, status, created_at, updated_at, expires_at, lease_secs, audience, \
         decision, result, error, pruned_at"
    };
}
pub(crate) const LIST_ROWS: &str = concat!("SELECT ", row_cols!(), " FROM proposals WHERE TRUE");
/// One proposal as a list shows it.
pub(crate) const ROW: &str = concat!("SELECT ", row_cols!(), " FROM proposals WHERE id = $1");
/// `instr` is SQLite's, `strpos` PostgreSQL's.
pub(crate) const FIND: Twin = Twin { lite: "instr", pg: "strpos" };
pub(crate) const GROUP: &str = concat!(
    "SELECT ",
    proposal_cols!(),
    " FROM proposals WHERE group_id = $1 AND (CAST($2 AS TEXT) IS NULL OR agent = $2) ORDER BY seq"
);
/// A node carries out and settles only what it received.
pub(crate) const UNSETTLED: &str = concat!(
    "SELECT ",
    proposal_cols!(),
    " FROM proposals WHERE status IN ('approved', 'applying') AND class = 'applied' AND node = $1 ORDER BY seq"
);
/// Read through the partial index of migration 0015 (its condition, word for word).
pub(crate) const PENDING_LEASES: &str =
    "SELECT id, lease_secs FROM proposals WHERE status = 'pending' AND lease_secs IS NOT NULL AND node = $1";
pub(crate) const COUNT_PENDING: &str = "SELECT COUNT(*) AS n FROM proposals WHERE status = 'pending'";
pub(crate) const DUE: &str =
    "SELECT id FROM proposals WHERE status = 'pending' AND expires_at <= $1 ORDER BY expires_at LIMIT $2";
pub(crate) const NEXT_EXPIRY: &str = "SELECT MIN(expires_at) AS at FROM proposals WHERE status = 'pending'";
pub(crate) const AUDIT_FOR: &str = concat!("SELECT ", audit_cols!(), " FROM audit WHERE proposal_id = $1 ORDER BY seq");
pub(crate) const AUDIT_AFTER: &str =
    concat!("SELECT ", audit_cols!(), " FROM audit WHERE seq > $1 ORDER BY seq LIMIT $2");
pub(crate) const AGENTS: &str = "SELECT name, created_at, revoked_at FROM agents WHERE node = $1 ORDER BY name";
pub(crate) const AGENT_TOKENS: &str = "SELECT name, token_hash FROM agents WHERE revoked_at IS NULL AND node = $1";
/// SQLite's single writer keeps a sum per agent and minute (migration 0008); a team store sums
/// its rows.
pub(crate) const STORED_BYTES: Twin = Twin {
    lite: "SELECT agent, last_at AS at, bytes FROM usage_minutes WHERE last_at >= $1 ORDER BY last_at",
    pg: "SELECT agent, created_at AS at, (octet_length(payload) + octet_length(preview))::int8 AS bytes \
         FROM proposals WHERE created_at >= $1 AND node = $2 ORDER BY created_at",
};
pub(crate) const CREDENTIALS: &str =
    "SELECT name, scheme, origins, created_at FROM credentials WHERE node = $1 ORDER BY name";
pub(crate) const RULES: &str = concat!("SELECT ", rule_cols!(), " FROM rules ORDER BY seq");
pub(crate) const RULE: &str = concat!("SELECT ", rule_cols!(), " FROM rules WHERE id = $1");
pub(crate) const RULES_AFTER: &str =
    concat!("SELECT ", rule_cols!(), " FROM rules WHERE seq > $1 ORDER BY seq LIMIT $2");
/// The decision is JSON kept as text: SQLite reads it with `json_extract`, PostgreSQL as `jsonb`.
pub(crate) const RULE_DECISIONS: Twin = Twin {
    lite: "SELECT json_extract(decision, '$.rule.id') AS rule, COUNT(*) AS n FROM proposals \
           WHERE id >= $1 AND json_extract(decision, '$.by') = 'rule' GROUP BY rule",
    pg: "SELECT (decision::jsonb)->'rule'->>'id' AS rule, COUNT(*) AS n FROM proposals \
         WHERE id >= $1 AND (decision::jsonb)->>'by' = 'rule' GROUP BY rule",
};
pub(crate) const RULE_SEQ: &str = "SELECT COALESCE(MAX(seq), 0) AS seq FROM rule_log";
pub(crate) const RULE_LOG_AFTER: &str =
    "SELECT seq, rule_id, event, actor, channel, at, rule FROM rule_log WHERE seq > $1 ORDER BY seq LIMIT $2";
pub(crate) const RECENT_FACTS: &str =
    "SELECT agent, kind, facts FROM proposals WHERE facts IS NOT NULL ORDER BY seq DESC LIMIT $1";

// Transactions. SQLite's writer takes the write lock at the start (no `SQLITE_BUSY` on upgrade).
pub(crate) const BEGIN: Twin = Twin { lite: "BEGIN IMMEDIATE", pg: "BEGIN" };

// New proposals.
/// The columns `ops::row` binds, in its order.
pub(crate) const INSERT: &str = "INSERT INTO proposals (id, node, kind, class, agent, title, summary, payload, preview, \
     base, session_id, group_id, status, created_at, updated_at, expires_at, facts, supersedes, idempotency_key, \
     request_sha256, created_by, created_channel, lease_secs, audience, gist)";
pub(crate) const INSERT_COLUMNS: usize = 25;

/// [`INSERT`] of one row, SQLite's and PostgreSQL's (see [`insert`]).
pub(crate) static INSERT_ONE: std::sync::LazyLock<[String; 2]> =
    std::sync::LazyLock::new(|| [insert(1, false), insert(1, true)]);

/// [`INSERT`] of `n` rows. Made at run time, it is numbered in each dialect's own form (`?n` on
/// SQLite) rather than translated from `$n` at every run, the multi-row one being 8 KB.
pub(crate) fn insert(n: usize, pg: bool) -> String {
    let mark = if pg { '$' } else { '?' };
    let row = |r: usize| {
        let params: Vec<String> = (1..=INSERT_COLUMNS).map(|c| format!("{mark}{}", r * INSERT_COLUMNS + c)).collect();
        format!("({})", params.join(", "))
    };
    format!("{INSERT} VALUES {}", (0..n).map(row).collect::<Vec<_>>().join(", "))
}
pub(crate) const IDEMPOTENT: &str =
    "SELECT id, request_sha256, created_at FROM proposals WHERE agent = $1 AND idempotency_key = $2 AND node = $3";
/// An idempotency key past its time, freed for a new proposal.
pub(crate) const RELEASE_KEY: &str = "UPDATE proposals SET idempotency_key = NULL WHERE id = $1";
pub(crate) const SUPERSEDED: &str = "SELECT agent, node, status FROM proposals WHERE id = $1";
/// SQLite keeps each agent's count by triggers (migration 0009); PostgreSQL counts on its index.
pub(crate) const PENDING: Twin = Twin {
    lite: "SELECT n FROM pending_counts WHERE agent = $1",
    pg: "SELECT COUNT(*) AS n FROM proposals WHERE agent = $1 AND status = 'pending' AND node = $2",
};
pub(crate) const RULE_MATCHED: &str = "UPDATE rules SET matched = matched + 1 WHERE id = $1";

// Status changes.
pub(crate) const TRANSITION: &str = "UPDATE proposals SET status = $1, updated_at = $2, \
     decision = COALESCE($3, decision), result = COALESCE($4, result), error = COALESCE($5, error) \
     WHERE id = $6 AND status = $7";
pub(crate) const STATUS: &str = "SELECT status FROM proposals WHERE id = $1";
pub(crate) const AUDIT: &str = "INSERT INTO audit (proposal_id, actor, channel, from_status, to_status, at, detail, \
     node) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";

// Agents, credentials, rules. PostgreSQL locks the row it reads to change, against another
// node's transaction; SQLite's one writer needs no lock.
pub(crate) const AGENT_STATE: Twin = Twin {
    lite: "SELECT revoked_at FROM agents WHERE name = $1 AND node = $2",
    pg: "SELECT revoked_at FROM agents WHERE name = $1 AND node = $2 FOR UPDATE",
};
pub(crate) const AGENT_REUSE: &str =
    "UPDATE agents SET token_hash = $2, created_at = $3, revoked_at = NULL WHERE name = $1 AND node = $4";
pub(crate) const AGENT_INSERT: &str = "INSERT INTO agents (name, token_hash, created_at, node) VALUES ($1, $2, $3, $4)";
pub(crate) const AGENT_TOKEN: &str = "UPDATE agents SET token_hash = $2 WHERE name = $1 AND node = $3";
pub(crate) const AGENT_REVOKE: &str =
    "UPDATE agents SET revoked_at = $2 WHERE name = $1 AND revoked_at IS NULL AND node = $3";
pub(crate) const AGENT_LOG: &str = "INSERT INTO agent_log (name, event, at, node) VALUES ($1, $2, $3, $4)";
pub(crate) const CREDENTIAL_INSERT: &str = "INSERT INTO credentials (name, scheme, origins, created_at, node) \
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING";
pub(crate) const CREDENTIAL_DELETE: &str = "DELETE FROM credentials WHERE name = $1 AND node = $2";
pub(crate) const RULE_INSERT: &str = "INSERT INTO rules (id, effect, match, everything, note, created_by, \
     created_channel, created_at, expires_at, node) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
pub(crate) const RULE_TO_REMOVE: Twin = Twin {
    lite: concat!("SELECT ", rule_cols!(), " FROM rules WHERE id = $1"),
    pg: concat!("SELECT ", rule_cols!(), " FROM rules WHERE id = $1 FOR UPDATE"),
};
pub(crate) const RULE_DELETE: &str = "DELETE FROM rules WHERE id = $1";
pub(crate) const RULE_LOG: &str = "INSERT INTO rule_log (rule_id, event, actor, channel, at, rule, node) \
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING seq";
/// The advisory lock between a change of the rules (alone) and the decisions rules make
/// (shared), on any node, each until its transaction ends; SQLite's one writer needs none.
pub(crate) const RULES_LOCK: [&str; 2] =
    ["SELECT pg_advisory_xact_lock_shared($1)", "SELECT pg_advisory_xact_lock($1)"];
/// The advisory lock's key (`assent-r` in ASCII).
pub(crate) const RULES_LOCK_KEY: i64 = 0x6173_7365_6e74_2d72;

// Paired devices (answering from a phone).
pub(crate) const DEVICES: &str = "SELECT name, credential_id, passkey, added_at, last_used_at, revoked_at, push FROM devices \
     WHERE node = $1 ORDER BY name";
pub(crate) const DEVICE_STATE: Twin = Twin {
    lite: "SELECT revoked_at FROM devices WHERE name = $1 AND node = $2",
    pg: "SELECT revoked_at FROM devices WHERE name = $1 AND node = $2 FOR UPDATE",
};
pub(crate) const DEVICE_INSERT: &str =
    "INSERT INTO devices (name, credential_id, passkey, added_at, node) VALUES ($1, $2, $3, $4, $5)";
pub(crate) const DEVICE_PAIRED_AGAIN: &str = "UPDATE devices SET credential_id = $2, passkey = $3, added_at = $4, \
     last_used_at = NULL, revoked_at = NULL, push = NULL WHERE name = $1 AND node = $5";
pub(crate) const DEVICE_USED: &str =
    "UPDATE devices SET passkey = $2, last_used_at = $3 WHERE name = $1 AND revoked_at IS NULL AND node = $4";
pub(crate) const DEVICE_PUSH: &str =
    "UPDATE devices SET push = $2 WHERE name = $1 AND revoked_at IS NULL AND node = $3";
pub(crate) const DEVICE_REVOKE: &str =
    "UPDATE devices SET revoked_at = $2, push = NULL WHERE name = $1 AND revoked_at IS NULL AND node = $3";

pub(crate) const REMOTE_LOG: &str =
    "INSERT INTO remote_log (device, event, at, detail, node) VALUES ($1, $2, $3, $4, $5)";
pub(crate) const REMOTE_LOG_AFTER: &str =
    "SELECT seq, device, event, at, detail FROM remote_log WHERE node = $1 AND seq > $2 ORDER BY seq LIMIT $3";

// A session's proposals by status ($2: the agent, $3: the node, each only when given).
pub(crate) const SESSION_COUNTS: &str = "SELECT status, count(*) AS n FROM proposals WHERE session_id = $1 \
     AND ($2 IS NULL OR agent = $2) AND ($3 IS NULL OR node = $3) GROUP BY status";

// Receipt keys: every node's, published while a receipt they signed may be relied on.
pub(crate) const RECEIPT_KEYS: &str = "SELECT kid, node, x, added_at, publish_until FROM receipt_keys \
     WHERE publish_until IS NULL OR publish_until > $1 ORDER BY node, added_at, kid";
pub(crate) const RECEIPT_KEY_RETIRE: &str = "UPDATE receipt_keys SET retired_at = $2, publish_until = $3 \
     WHERE node = $1 AND retired_at IS NULL AND kid <> $4";
pub(crate) const RECEIPT_KEY_INSERT: &str = "INSERT INTO receipt_keys (kid, node, x, added_at) VALUES ($1, $2, $3, $4) \
     ON CONFLICT (kid) DO NOTHING";

// Retention. PostgreSQL's nodes prune at once, each taking rows no other holds.
macro_rules! prune_due {
    () => {
        "SELECT id, payload, preview, result, decision FROM proposals WHERE pruned_at IS NULL AND updated_at < $1 \
         AND (status IN ('applied', 'failed', 'rejected', 'refined', 'expired', 'withdrawn') \
              OR (status = 'approved' AND class = 'decision_only')) ORDER BY seq LIMIT $2"
    };
}
pub(crate) const PRUNE_DUE: Twin = Twin { lite: prune_due!(), pg: concat!(prune_due!(), " FOR UPDATE SKIP LOCKED") };
pub(crate) const PRUNE: &str = "UPDATE proposals SET pruned_at = $1, payload = $2, preview = $3, result = $4, \
     decision = $5, facts = NULL, gist = NULL WHERE id = $6 AND pruned_at IS NULL";

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    /// Start-up reads the leased pending proposals through their partial index, never by
    /// walking every pending proposal (SQLite's plan for the statement as the store sends it,
    /// `$1` being SQLite's numbered parameter too).
    #[tokio::test]
    async fn pending_leases_are_read_through_their_index() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("assent.db");
        drop(crate::SqliteStore::open(&path).await.unwrap());
        let c = rusqlite::Connection::open(&path).unwrap();
        let mut st = c.prepare(&format!("EXPLAIN QUERY PLAN {}", super::PENDING_LEASES)).unwrap();
        let plan: Vec<String> =
            st.query_map([""], |r| r.get::<_, String>(3)).unwrap().collect::<Result<_, _>>().unwrap();
        assert!(plan.iter().any(|d| d.contains("USING INDEX proposals_pending_leased")), "{plan:?}");
    }
}

//! The one error type of the core. Each variant carries a stable machine-readable code that
//! the API turns into a status and a JSON body; hosts never have to parse messages.

/// What went wrong, in the domain's terms.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// No such proposal (or not one the caller may see: agents get this for others' ids).
    #[error("{0}")]
    NotFound(String),
    /// The proposal is not in a status that allows this.
    #[error("{message}")]
    InvalidState {
        /// Human-readable explanation, naming the current status.
        message: String,
    },
    /// The same idempotency key was used with another body.
    #[error("this Idempotency-Key was already used with a different request body")]
    IdempotencyConflict,
    /// A named thing already exists (an agent name).
    #[error("{0}")]
    Conflict(String),
    /// The request is well-formed JSON but not acceptable. `code` is stable.
    #[error("{message}")]
    Invalid {
        /// Stable code, e.g. `unknown_kind`, `invalid_payload`.
        code: &'static str,
        /// Human-readable explanation.
        message: String,
    },
    /// The caller may not do this (an agent trying to decide).
    #[error("{0}")]
    Forbidden(String),
    /// A per-agent limit was reached. `code` is stable.
    #[error("{message}")]
    TooMany {
        /// `too_many_pending` or `too_many_waits`.
        code: &'static str,
        /// Human-readable explanation.
        message: String,
    },
    /// A service Assent depends on (the system keychain) cannot be used now. `code` is stable.
    #[error("{message}")]
    Unavailable {
        /// `keychain_unavailable`.
        code: &'static str,
        /// Human-readable explanation.
        message: String,
    },
    /// The rules changed (on this node or another) after they decided a proposal: the store
    /// wrote nothing, and the proposal is decided again by the rules now in force.
    #[error("the rules changed as the proposal was filed")]
    RulesChanged,
    /// Storage failed. Details go to the log, never to a client.
    #[error("storage error: {0}")]
    Store(#[from] StoreError),
}

impl CoreError {
    /// Shorthand for an [`CoreError::Invalid`].
    pub fn invalid(code: &'static str, message: impl Into<String>) -> Self {
        CoreError::Invalid { code, message: message.into() }
    }

    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            CoreError::NotFound(_) => "not_found",
            CoreError::InvalidState { .. } => "invalid_state",
            CoreError::IdempotencyConflict => "idempotency_conflict",
            CoreError::Conflict(_) => "conflict",
            CoreError::Invalid { code, .. } => code,
            CoreError::Forbidden(_) => "forbidden",
            CoreError::TooMany { code, .. } => code,
            CoreError::Unavailable { code, .. } => code,
            CoreError::RulesChanged => "rules_changed",
            CoreError::Store(StoreError::Full) => "storage_full",
            CoreError::Store(StoreError::Unavailable(_)) => "store_unavailable",
            CoreError::Store(_) => "internal",
        }
    }
}

/// A failure of the storage layer, already stripped of driver types.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be read or written.
    #[error("database: {0}")]
    Database(String),
    /// A stored row could not be decoded (corruption or a bug).
    #[error("corrupt row: {0}")]
    Corrupt(String),
    /// The writer task is gone (the engine is shutting down).
    #[error("the store is closed")]
    Closed,
    /// A database server that cannot be reached right now (a team store): nothing was
    /// written; the server reconnects on its own.
    #[error("the team database cannot be reached right now ({0}); nothing was stored, try again")]
    Unavailable(String),
    /// The disk holding the database is full: nothing was written, and what was stored stays.
    #[error("the disk holding Assent's database is full; free some space and try again")]
    Full,
}

impl StoreError {
    /// The same failure again, for a second waiter on one batch (the driver's error is gone
    /// by then; its kind is kept).
    pub fn again(&self, context: &str) -> StoreError {
        match self {
            StoreError::Full => StoreError::Full,
            StoreError::Closed => StoreError::Closed,
            StoreError::Unavailable(e) => StoreError::Unavailable(e.clone()),
            e => StoreError::Database(format!("{context}{e}")),
        }
    }
}

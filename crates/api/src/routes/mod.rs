//! The routes, one module per resource.

pub mod admin;
pub mod decisions;
pub mod events;
pub mod proposals;
pub mod rules;

/// Query of the append-only logs (`GET /v1/audit`, `GET /v1/rules/log`).
#[derive(serde::Deserialize)]
pub struct LogQuery {
    after: Option<i64>,
    limit: Option<u32>,
}

impl LogQuery {
    /// Where to start and how many (1,000 by default, at most 10,000).
    pub fn range(&self) -> (i64, u32) {
        (self.after.unwrap_or(0), self.limit.unwrap_or(1000).clamp(1, 10_000))
    }
}

/// A page of a log: its rows and, when the page is full, the `next_after` to ask for next.
pub fn log_page<T: serde::Serialize>(items: Vec<T>, limit: u32, seq: impl Fn(&T) -> i64) -> serde_json::Value {
    let next = if items.len() as u32 == limit { items.last().map(seq) } else { None };
    serde_json::json!({ "items": items, "next_after": next })
}

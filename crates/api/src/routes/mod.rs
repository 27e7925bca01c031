//! The routes, one module per resource.

pub mod admin;
pub mod decisions;
pub mod events;
pub mod keys;
pub mod proposals;
pub mod remote;
pub mod rules;
pub mod sessions;

/// Query of the append-only logs (`GET /v1/audit`, `GET /v1/rules/log`).
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LogQuery {
    /// Rows after this position (0: from the start).
    after: Option<i64>,
    /// How many (1,000 when left out; 0 counts as 1, and more than 10,000 as 10,000).
    #[param(schema_with = crate::extract::count_schema)]
    limit: Option<crate::extract::Count>,
}

impl LogQuery {
    /// Where to start and how many (1,000 by default, at most 10,000).
    pub fn range(&self) -> (i64, u32) {
        (self.after.unwrap_or(0), self.limit.map_or(1000, |c| c.0.clamp(1, 10_000) as u32))
    }
}

/// Query of `GET /v1/rules`.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RulePageQuery {
    /// Rules after this position: the `next_after` of the page before (none: from the first).
    after: Option<i64>,
    /// How many (200 when left out; 0 counts as 1, and more than 1,000 as 1,000).
    #[param(schema_with = crate::extract::count_schema)]
    limit: Option<crate::extract::Count>,
}

/// When a page of a log is full, the `next_after` to ask for next.
pub fn next_after<T>(items: &[T], limit: u32, seq: impl Fn(&T) -> i64) -> Option<i64> {
    if items.len() as u32 == limit { items.last().map(seq) } else { None }
}

//! Multi-row insert statements, built once per row count: a batch writes its rows in as few
//! statements as it can, and each distinct text stays in the connection's prepared-statement
//! cache.

use std::sync::Arc;

/// The statements `INSERT INTO {table} ({columns}) VALUES (...), ...` by row count.
pub(crate) struct MultiInsert {
    head: &'static str,
    columns: usize,
    /// `?` (SQLite) or `$n` numbered from 1 (PostgreSQL).
    numbered: bool,
    built: Vec<Option<Arc<str>>>,
}

impl MultiInsert {
    /// `head` is `INSERT INTO table (a, b, ...)`, naming `columns` columns.
    pub(crate) fn new(head: &'static str, columns: usize, numbered: bool) -> Self {
        Self { head, columns, numbered, built: Vec::new() }
    }

    /// The statement for `n` rows (n >= 1).
    pub(crate) fn rows(&mut self, n: usize) -> Arc<str> {
        if self.built.len() < n {
            self.built.resize(n, None);
        }
        let (head, columns, numbered) = (self.head, self.columns, self.numbered);
        self.built[n - 1]
            .get_or_insert_with(|| {
                let rows: Vec<String> = (0..n)
                    .map(|r| {
                        let params: Vec<String> = (1..=columns)
                            .map(|c| if numbered { format!("${}", r * columns + c) } else { "?".into() })
                            .collect();
                        format!("({})", params.join(", "))
                    })
                    .collect();
                format!("{head} VALUES {}", rows.join(", ")).into()
            })
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::MultiInsert;

    #[test]
    fn placeholders_for_each_dialect() {
        let mut q = MultiInsert::new("INSERT INTO t (a, b)", 2, false);
        assert_eq!(&*q.rows(2), "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)");
        let mut pg = MultiInsert::new("INSERT INTO t (a, b)", 2, true);
        assert_eq!(&*pg.rows(2), "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)");
        assert!(std::sync::Arc::ptr_eq(&pg.rows(2), &pg.rows(2)), "built once");
    }
}

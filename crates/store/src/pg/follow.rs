//! Following the other nodes: `LISTEN` for the changes every audit and rule-log row announces,
//! and the advisory lock that makes a node's name its own while it runs.

use super::db_err;
use assent_core::error::StoreError;
use assent_core::status::Status;
use assent_core::store::RemoteChange;
use sqlx::postgres::{PgConnectOptions, PgListener, PgPool};
use sqlx::{ConnectOptions, Connection, PgConnection};
use std::time::Duration;
use tokio::sync::mpsc;

/// The session advisory lock on this node's name, held on a connection of its own for as long
/// as the server runs (PostgreSQL releases it if the process dies). Should that connection drop,
/// it is taken again; if another server took the name meanwhile, that is logged loudly.
pub(crate) struct NodeLock {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for NodeLock {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn try_lock(opts: &PgConnectOptions, node: &str) -> Result<(PgConnection, bool), StoreError> {
    let mut conn = opts.connect().await.map_err(db_err)?;
    let got: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock(hashtextextended('assent-node:' || $1, 0))")
        .bind(node)
        .fetch_one(&mut conn)
        .await
        .map_err(db_err)?;
    Ok((conn, got))
}

impl NodeLock {
    pub(crate) async fn take(opts: PgConnectOptions, node: &str) -> Result<Self, StoreError> {
        let (mut conn, got) = try_lock(&opts, node).await?;
        if !got {
            return Err(StoreError::Database(format!(
                "another Assent server is running as node `{node}` on this team database: give this one another \
                 name (`node = \"...\"` in config.toml) or stop the other"
            )));
        }
        let node = node.to_string();
        let task = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(5)).await;
                if conn.ping().await.is_ok() {
                    continue;
                }
                // The connection and with it the lock are gone: take it again once the database is back.
                loop {
                    match try_lock(&opts, &node).await {
                        Ok((c, true)) => {
                            conn = c;
                            break;
                        }
                        Ok((c, false)) => {
                            tracing::error!(
                                node,
                                "another Assent server took this node's name while the database was out of reach"
                            );
                            conn = c;
                            break;
                        }
                        Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
                    }
                }
            }
        });
        Ok(Self { task })
    }
}

/// Parses `id from to node` as the audit trigger announces it.
fn parse(payload: &str, me: &str) -> Option<RemoteChange> {
    let mut parts = payload.split(' ');
    let (id, from, _to, node) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if node == me {
        return None;
    }
    let from = match from {
        "-" => None,
        s => Some(s.parse::<Status>().ok()?),
    };
    Some(RemoteChange::Proposal { id: id.to_string(), from })
}

async fn listen(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut l = PgListener::connect_with(pool).await?;
    l.ignore_pool_close_event(true);
    l.listen_all(["assent_proposals", "assent_rules"]).await?;
    Ok(l)
}

/// Listens before returning, so that nothing committed after the caller's first read is missed.
pub(crate) async fn start(pool: PgPool, node: String) -> Result<mpsc::Receiver<RemoteChange>, StoreError> {
    let mut listener = listen(&pool).await.map_err(db_err)?;
    let (tx, rx) = mpsc::channel(4096);
    tokio::spawn(async move {
        loop {
            match listener.try_recv().await {
                Ok(Some(n)) => {
                    let change = match n.channel() {
                        "assent_rules" if !n.payload().ends_with(&format!(" {node}")) => Some(RemoteChange::Rules),
                        "assent_proposals" => parse(n.payload(), &node),
                        _ => None,
                    };
                    if let Some(c) = change
                        && tx.send(c).await.is_err()
                    {
                        return;
                    }
                }
                // The connection was lost: listen again on a new one, then catch up, since what
                // committed meanwhile was announced to nobody here.
                Ok(None) | Err(_) => {
                    tracing::warn!(node, "lost the team database; reconnecting");
                    listener = loop {
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        if tx.is_closed() {
                            return;
                        }
                        if let Ok(l) = listen(&pool).await {
                            break l;
                        }
                    };
                    if tx.send(RemoteChange::Resync).await.is_err() {
                        return;
                    }
                }
            }
        }
    });
    Ok(rx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announcements_from_other_nodes_are_read_and_ones_own_are_not() {
        assert_eq!(
            parse("p_1 - pending laptop", "build"),
            Some(RemoteChange::Proposal { id: "p_1".into(), from: None })
        );
        assert_eq!(
            parse("p_1 pending approved build", "laptop"),
            Some(RemoteChange::Proposal { id: "p_1".into(), from: Some(Status::Pending) })
        );
        assert_eq!(parse("p_1 pending approved build", "build"), None);
        assert_eq!(parse("garbage", "build"), None);
        assert_eq!(parse("p_1 nonsense approved x", "build"), None);
    }
}

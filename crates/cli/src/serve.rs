//! `assent serve`: the engine and the API headless, on the same [`assent_host::start`] the
//! desktop app runs.

use anyhow::Result;
use assent_host::home::Home;
use assent_host::start::{start, stop_signal};
use std::io::Write;
use std::net::IpAddr;

pub use assent_host::start::{Opened, OwnerWhere, Running, open};

/// Flags of `serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Port to listen on (0 picks a free one). Default: config `port`, else 4517.
    #[arg(long)]
    pub port: Option<u16>,
    /// Address to listen on; only loopback addresses are accepted.
    #[arg(long)]
    pub bind: Option<IpAddr>,
    /// Show a desktop notification for each new proposal, answerable with Approve / Reject
    /// (the desktop app always does).
    #[arg(long)]
    pub notify: bool,
    /// A team store shared with other Assent servers: postgres://USER@HOST:PORT/DB (no password
    /// in it: `assent store password` or ~/.pgpass). Default: config `store`, else `ASSENT_STORE`,
    /// else the SQLite database in the home.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
}

/// Runs the server until a stop signal.
pub async fn run(home: Home, args: ServeArgs) -> Result<()> {
    let flags = assent_host::start::Flags { port: args.port, bind: args.bind, store: args.store };
    let mut running = start(home, flags).await?;
    if args.notify {
        let host = std::sync::Arc::new(assent_notify::Headless);
        let a = assent_notify::start(running.engine.clone(), host, assent_notify::Options::default()).await;
        tracing::info!(notifications = %a.describe(), "desktop notifications");
    }
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "Assent is listening on {}/v1 (home {})", running.url, running.home.dir.display())?;
        out.flush()?;
    }
    let result = tokio::select! {
        e = running.failed() => Err(e),
        _ = stop_signal() => Ok(()),
    };
    running.stop().await;
    result
}

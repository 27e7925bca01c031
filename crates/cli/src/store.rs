//! `assent store ...`: the team store. `migrate` brings a PostgreSQL schema up to date,
//! `password` keeps its password in the keychain, `copy` moves this home's SQLite history into
//! it once, as this node's.

use anyhow::{Context, Result, bail};
use assent_host::config::Config;
use assent_host::home::Home;
use assent_host::start::{store_password_entry, team_options};
use assent_store::pg;
use clap::Subcommand;

/// `assent store ...`
#[derive(Debug, Subcommand)]
pub enum StoreCmd {
    /// Bring the team database's schema up to date (servers also do it when they start).
    Migrate {
        /// The team store (default: config `store`, else ASSENT_STORE).
        #[arg(long, value_name = "URL")]
        store: Option<String>,
    },
    /// Keep the team database's password in the system keychain (read from standard input, or
    /// asked for, hidden).
    Password {
        /// The team store (default: config `store`, else ASSENT_STORE).
        #[arg(long, value_name = "URL")]
        store: Option<String>,
    },
    /// Move this home's history (proposals, their audit trails, agents, credentials' metadata,
    /// the rule log) into a team database, once, as this node's; verified by counts and hashes.
    Copy {
        /// The team store to copy into.
        #[arg(long, value_name = "URL")]
        to: String,
    },
}

fn url(config: &Config, flag: Option<String>) -> Result<String> {
    flag.or_else(|| config.store.clone())
        .context("no team store: pass --store URL, or set `store` in config.toml or ASSENT_STORE")
}

/// Runs a `store` subcommand.
pub async fn run(home: &Home, cmd: StoreCmd) -> Result<()> {
    let config = Config::load(&home.config())?;
    match cmd {
        StoreCmd::Migrate { store } => {
            let url = url(&config, store)?;
            let opts = team_options(&config, &url).await?;
            let m = pg::migrate(&opts).await.with_context(|| format!("cannot migrate {}", pg::display_url(&url)))?;
            if m.from == m.to {
                println!("{} is up to date (schema {})", pg::display_url(&url), m.to);
            } else {
                println!("{}: schema {} -> {}", pg::display_url(&url), m.from, m.to);
            }
        }
        StoreCmd::Password { store } => {
            let url = url(&config, store)?;
            pg::parse_url(&url).map_err(anyhow::Error::msg)?;
            let secret = crate::input::read_secret()?;
            let entry = store_password_entry(&url);
            tokio::task::spawn_blocking(move || assent_secrets::Keychain::default().set(&entry, &secret))
                .await?
                .context("cannot keep the password in the system keychain (is one running? ~/.pgpass works too)")?;
            println!("the password of {} is in the system keychain", pg::display_url(&url));
        }
        StoreCmd::Copy { to } => {
            // Nothing may write the SQLite history while it is read.
            let _lock = home.lock_exclusive().context("stop Assent (the app and `assent serve`) first")?;
            if !home.db().exists() {
                bail!("there is no history to copy: {} does not exist", home.db().display());
            }
            let opts = team_options(&config, &to).await?;
            let report = pg::copy_from_sqlite(&home.db(), &opts)
                .await
                .with_context(|| format!("cannot copy into {}", pg::display_url(&to)))?;
            println!("copied {} into {} as node `{}`:", home.db().display(), pg::display_url(&to), report.node);
            for (table, rows, sha) in &report.tables {
                println!("  {table:<12} {rows:>8} rows  sha256 {sha}");
            }
            if report.rules_left_out > 0 {
                println!(
                    "{} rules were not copied: a team's rules apply to every node's agents; add the ones the team \
                     wants with `assent rule add`",
                    report.rules_left_out
                );
            }
            println!("set `store = \"{}\"` and `node = \"{}\"` in config.toml to run on it", to, report.node);
        }
    }
    Ok(())
}

//! `assent receipt ...`: the keys that sign decisions' receipts, and checking a receipt (offline
//! with `--keys`).

use crate::ExitError;
use crate::home::Home;
use anyhow::{Context, Result};
use assent_receipt::{Expect, KeySet, Refusal, ToolCall, verify};
use clap::Subcommand;
use serde_json::Value;
use std::path::PathBuf;

/// `assent receipt ...`
#[derive(Debug, Subcommand)]
pub enum ReceiptCmd {
    /// Print the public keys that sign receipts, as a JWK Set (what `GET /v1/keys` serves).
    Keys,
    /// Start a new signing key: it signs every receipt from now on, and the old one stays
    /// published until the last receipt it signed expires.
    Rotate {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check a receipt: exit 0 and its claims when valid; otherwise a one-line reason and an
    /// exit code of its own (10 malformed, 11 algorithm, 12 unknown key, 13 signature,
    /// 14 expired, 15 not yet valid, 16 audience, 17 payload or input, 19 not an approval,
    /// 20 another tool). Only an approval is valid unless `--any-outcome` says otherwise.
    Verify {
        /// The receipt (a compact JWS), or `-` to read it from standard input.
        token: String,
        /// The payload about to be acted on (JSON): its hash must be the approved one.
        #[arg(long, value_name = "FILE")]
        payload: Option<PathBuf>,
        /// This verifier's name: the receipt must be made for it.
        #[arg(long)]
        audience: Option<String>,
        /// The tool about to run (with --input): the receipt must be for it.
        #[arg(long, requires = "input")]
        tool: Option<String>,
        /// The tool's arguments (JSON) about to be used: their hash must be the approved input's.
        #[arg(long, value_name = "FILE", requires = "tool")]
        input: Option<PathBuf>,
        /// The keys to trust, a JWK Set file (offline); default: the running server's.
        #[arg(long, value_name = "JWKS-FILE")]
        keys: Option<PathBuf>,
        /// Only an approval is valid (the default; kept for scripts that say so).
        #[arg(long, hide = true, conflicts_with = "any_outcome")]
        approved: bool,
        /// A receipt of any outcome is valid (a rejection, a request for changes): for an audit,
        /// never before acting.
        #[arg(long)]
        any_outcome: bool,
    },
}

/// The exit code of each refusal.
pub fn exit_code(r: &Refusal) -> u8 {
    match r {
        Refusal::Malformed(_) => 10,
        Refusal::Algorithm(_) => 11,
        Refusal::UnknownKey(_) => 12,
        Refusal::Signature => 13,
        Refusal::Expired(_) => 14,
        Refusal::NotYetValid(_) => 15,
        Refusal::Audience(_) => 16,
        Refusal::Payload => 17,
        Refusal::Replayed(_) => 18,
        Refusal::NotApproved(_) => 19,
        Refusal::Tool(_) => 20,
    }
}

fn json_file(f: &std::path::Path) -> Result<Value> {
    let text = std::fs::read_to_string(f).with_context(|| format!("cannot read {}", f.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not JSON", f.display()))
}

async fn server_keys(home: &Home) -> Result<Value> {
    let client = crate::client::Client::owner(home)?;
    client.call(reqwest::Method::GET, "/keys", None, &[]).await
}

/// Runs `assent receipt ...`.
pub async fn run(home: &Home, cmd: ReceiptCmd) -> Result<()> {
    match cmd {
        ReceiptCmd::Keys => {
            println!("{}", serde_json::to_string_pretty(&server_keys(home).await?)?);
        }
        ReceiptCmd::Rotate { json } => {
            let client = crate::client::Client::owner(home)?;
            let r = client.call(reqwest::Method::POST, "/keys/rotate", None, &[]).await?;
            if json {
                println!("{r}");
            } else {
                println!("key {} signs receipts from now on", r["kid"].as_str().unwrap_or("?"));
                for k in r["retired"].as_array().into_iter().flatten() {
                    println!(
                        "key {} no longer signs; published until {} (its last receipt expires then)",
                        k["kid"].as_str().unwrap_or("?"),
                        k["published_until"].as_str().unwrap_or("?")
                    );
                }
            }
        }
        ReceiptCmd::Verify { token, payload, audience, tool, input, keys, approved: _, any_outcome } => {
            let token = if token == "-" {
                let mut t = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut t)?;
                t.trim().to_string()
            } else {
                token
            };
            let jwks: Value = match &keys {
                Some(f) => json_file(f)?,
                None => server_keys(home).await?,
            };
            let keys = KeySet::from_json(&jwks).map_err(|e| anyhow::anyhow!("the key set: {e}"))?;
            let payload = payload.as_deref().map(json_file).transpose()?;
            let input = input.as_deref().map(json_file).transpose()?;
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0);
            let tool_call = tool.as_deref().zip(input.as_ref()).map(|(name, input)| ToolCall { name, input });
            let expect =
                Expect { payload: payload.as_ref(), audience: audience.as_deref(), tool_call, approved: !any_outcome };
            match verify(&token, &keys, &expect, now) {
                Ok(claims) => println!("{}", serde_json::to_string_pretty(&claims)?),
                Err(r) => {
                    return Err(ExitError::new(exit_code(&r), format!("invalid receipt ({}): {r}", r.code())).into());
                }
            }
        }
    }
    Ok(())
}

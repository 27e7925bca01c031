//! `assent remote ...`: answering from a phone. Each command asks the running server, so it
//! takes effect at once, with no restart.

use crate::client::Client;
use crate::home::Home;
use crate::output;
use anyhow::Result;
use assent_client::enc;
use clap::Subcommand;
use reqwest::Method;
use serde_json::{Value, json};

/// `assent remote ...`
#[derive(Debug, Subcommand)]
pub enum RemoteCmd {
    /// Turn the remote listener on: it serves the review page on its own loopback port, for a
    /// tunnel you trust (`tailscale serve`, a reverse proxy, SSH) to reach from your phone.
    Enable {
        /// The address your phone opens, `https://NAME` (the tunnel's name for this machine).
        /// Left out: the one set before.
        #[arg(long)]
        origin: Option<String>,
        /// The loopback port to listen on (default: the one used before, else 4518).
        #[arg(long)]
        port: Option<u16>,
        /// Seconds a proposal may wait before your paired phones are pushed (0: at once;
        /// default 60). A push says how many proposals wait, nothing else.
        #[arg(long, value_name = "SECS")]
        push_after: Option<u64>,
        /// Also push to this ntfy topic, https://HOST/TOPIC ("" stops it).
        #[arg(long, value_name = "URL")]
        ntfy: Option<String>,
        /// Read the ntfy topic's access token from standard input, into the keychain.
        #[arg(long)]
        ntfy_token_stdin: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Whether the remote listener is on, its origin, and where the tunnel must point.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Pair a phone: a one-time link (five minutes) and its QR code.
    Pair {
        /// The device's name, filled in on the phone ("Anna's Pixel").
        #[arg(long)]
        name: Option<String>,
        /// Print JSON (the link, no QR code).
        #[arg(long)]
        json: bool,
    },
    /// List paired devices.
    Devices {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a paired device: it can no longer log in or decide, and its sessions end now.
    Revoke {
        /// The device's name.
        name: String,
    },
    /// Turn the remote listener off: every session and pairing code ends.
    Disable {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The remote log: devices paired and revoked, and every refused attempt.
    Log {
        /// Print JSON lines.
        #[arg(long)]
        json: bool,
    },
}

fn print_status(v: &Value) {
    if v["enabled"].as_bool() == Some(true) {
        println!("on: {}", output::safe(v["origin"].as_str().unwrap_or("")));
        println!("listening on {} (point your tunnel here)", v["address"].as_str().unwrap_or("?"));
    } else {
        match v["origin"].as_str() {
            Some(o) => println!("off (last origin: {})", output::safe(o)),
            None => println!("off"),
        }
    }
    println!(
        "{} paired device(s), {} asking for pushes; pushed after {} s pending{}",
        v["devices"].as_u64().unwrap_or(0),
        v["subscribed"].as_u64().unwrap_or(0),
        v["push_after"].as_u64().unwrap_or(0),
        v["ntfy"].as_str().map(|n| format!(", and to ntfy {}", output::safe(n))).unwrap_or_default()
    );
}

/// An RFC 3339 time as `2026-12-02 18:30:00 UTC` (the zone said: the API's times are UTC).
fn time(v: &Value) -> String {
    let Some(t) = v.as_str() else { return "-".into() };
    let day_and_time = t.chars().take(19).collect::<String>().replace('T', " ");
    let zone = match t.get(19..).map(|rest| rest.trim_start_matches(|c: char| c == '.' || c.is_ascii_digit())) {
        Some("Z" | "+00:00") => " UTC".to_string(),
        Some(z) if !z.is_empty() => format!(" {z}"),
        _ => String::new(),
    };
    format!("{day_and_time}{zone}")
}

/// The link as a QR code of Unicode half blocks, light on dark so it reads on a dark terminal
/// and a light one alike (the quiet zone frames it).
fn qr(link: &str) -> Option<String> {
    use qrcode::render::unicode::Dense1x2;
    let code = qrcode::QrCode::new(link.as_bytes()).ok()?;
    Some(code.render::<Dense1x2>().dark_color(Dense1x2::Light).light_color(Dense1x2::Dark).quiet_zone(true).build())
}

/// Runs `assent remote ...`.
pub async fn run(home: &Home, cmd: RemoteCmd) -> Result<()> {
    let client = Client::owner(home)?;
    match cmd {
        RemoteCmd::Enable { origin, port, push_after, ntfy, ntfy_token_stdin, json } => {
            if ntfy_token_stdin {
                let mut token = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut token)?;
                let mode = crate::config::Config::load(&home.config())?.owner_mode()?;
                let kept = assent_secrets::owner::keep_in(
                    assent_secrets::owner::NTFY,
                    &home.dir,
                    mode,
                    &assent_secrets::Keychain::default(),
                    token.trim(),
                )
                .map_err(|e| anyhow::anyhow!("cannot keep the ntfy token: {e}"))?;
                if kept == assent_secrets::owner::Where::File {
                    eprintln!(
                        "no system keychain: the ntfy token is kept in the home ({})",
                        assent_secrets::PRIVATE_FILE
                    );
                }
            }
            let body = json!({ "origin": origin, "port": port, "push_after": push_after, "ntfy": ntfy });
            let v = client.call(Method::PUT, "/remote", Some(&body), &[]).await?;
            if json {
                println!("{v}");
            } else {
                print_status(&v);
                eprintln!("next: `assent remote pair` shows a link and QR code to open on your phone");
            }
        }
        RemoteCmd::Status { json } => {
            let v = client.call(Method::GET, "/remote", None, &[]).await?;
            if json { println!("{v}") } else { print_status(&v) }
        }
        RemoteCmd::Pair { name, json } => {
            let v = client.call(Method::POST, "/remote/pairings", Some(&json!({ "name": name })), &[]).await?;
            let link = v["link"].as_str().unwrap_or("");
            if json {
                println!("{v}");
            } else {
                if std::io::IsTerminal::is_terminal(&std::io::stdout())
                    && let Some(code) = qr(link)
                {
                    println!("{code}");
                }
                println!("{link}");
                eprintln!(
                    "Open this on your phone within five minutes (it works once), then create the passkey it asks for. Until {}.",
                    time(&v["expires_at"])
                );
            }
        }
        RemoteCmd::Devices { json } => {
            let v = client.call(Method::GET, "/remote/devices", None, &[]).await?;
            if json {
                println!("{v}");
            } else {
                println!("{:<24}  {:<19}  {:<19}  STATUS", "NAME", "PAIRED (UTC)", "LAST USED");
                for d in v["items"].as_array().cloned().unwrap_or_default() {
                    let status = if d["revoked_at"].is_null() {
                        "paired".to_string()
                    } else {
                        format!("revoked {}", time(&d["revoked_at"]))
                    };
                    println!(
                        "{:<24}  {:<19}  {:<19}  {status}",
                        output::safe(d["name"].as_str().unwrap_or("")),
                        time(&d["added_at"]),
                        time(&d["last_used_at"])
                    );
                }
            }
        }
        RemoteCmd::Revoke { name } => {
            client.call(Method::DELETE, &format!("/remote/devices/{}", enc(&name)), None, &[]).await?;
            println!("device `{}` revoked: it can no longer log in or decide", output::safe(&name));
        }
        RemoteCmd::Disable { json } => {
            let v = client.call(Method::DELETE, "/remote", None, &[]).await?;
            if json { println!("{v}") } else { print_status(&v) }
        }
        RemoteCmd::Log { json } => {
            let mut after = 0i64;
            loop {
                let v = client.call(Method::GET, &format!("/remote/log?after={after}"), None, &[]).await?;
                for e in v["items"].as_array().cloned().unwrap_or_default() {
                    if json {
                        println!("{e}");
                    } else {
                        let detail = e["detail"].get("code").or_else(|| e["detail"].get("origin"));
                        println!(
                            "{}  {:<16}  {}{}",
                            time(&e["at"]),
                            e["event"].as_str().unwrap_or(""),
                            output::safe(e["device"].as_str().unwrap_or("")),
                            detail
                                .and_then(Value::as_str)
                                .map(|d| format!("  ({})", output::safe(d)))
                                .unwrap_or_default()
                        );
                    }
                }
                match v["next_after"].as_i64() {
                    Some(n) => after = n,
                    None => break,
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod zone_tests {
    use super::time;
    use serde_json::json;

    #[test]
    fn times_say_their_zone() {
        assert_eq!(time(&json!("2026-12-02T18:30:00Z")), "2026-12-02 18:30:00 UTC");
        assert_eq!(time(&json!("2026-12-02T18:30:00.123Z")), "2026-12-02 18:30:00 UTC");
        assert_eq!(time(&json!("2026-12-02T18:30:00+01:00")), "2026-12-02 18:30:00 +01:00");
        assert_eq!(time(&json!(null)), "-");
    }
}

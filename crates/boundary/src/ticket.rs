//! The ticket: what a hook leaves for the confined run of a call it answered with a box, and how
//! the run takes it.
//!
//! The hook writes the settled proposal to the home (`runs/ID.json`, this user's alone); the
//! server writes the key set that signs receipts (`keys.json`), at start and again after each
//! rotation ([`write_keys`]). `assent run ID`, as the hook rewrote the call, claims the ticket
//! ([`claim`]: used once) and checks it ([`approved`]): signed by this Assent, for this
//! proposal, approved, for exactly the approved payload, naming the same box and hosts. What
//! runs is the approved payload's command in its working folder, never the agent's text quoted
//! once more. Anything missing or not as it should be, and the run asks the server instead; a
//! ticket the client never ran goes after an hour ([`prune`]).

use crate::Confine;
use crate::home::Home;
use assent_receipt::{Expect, KeySet, verify};
use std::path::Path;

/// What a confined run runs: the approved command, its folder, its box.
#[derive(Debug, Clone, PartialEq)]
pub struct Approved {
    /// The command line, run by bash.
    pub command: String,
    /// The working folder.
    pub cwd: String,
    /// The box.
    pub profile: Confine,
    /// The hosts the box reaches (none: no network).
    pub hosts: Vec<String>,
}

/// Why a proposal runs nothing confined.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

/// What `p` (as the API returns it) approved to run confined, its receipt checked with `keys`
/// at `now` (seconds).
pub fn approved(p: &assent_core::Proposal, keys: &KeySet, now: i64) -> Result<Approved, Refused> {
    let id = &p.id;
    let refuse = |m: String| Refused(m);
    if p.kind != assent_core::payloads::KindName::ToolCall || p.status != assent_core::status::Status::Approved {
        return Err(refuse(format!("{id} is not an approved tool call (it is {} {})", p.kind, p.status.as_str())));
    }
    let d = p.decision.as_ref().ok_or_else(|| refuse(format!("{id} has no decision")))?;
    let Some(confine) = d.confine else {
        return Err(refuse(format!(
            "{id} was approved to run as the client runs it, not confined in a box: `assent run` runs only what was approved in one"
        )));
    };
    let approved = p.approved_payload.as_ref().unwrap_or(&p.payload);
    let receipt = d.receipt.as_deref().ok_or_else(|| refuse(format!("{id} has no receipt to check")))?;
    let json = approved.to_value();
    let expect = Expect { payload: Some(&json), audience: None, tool_call: None, approved: true };
    let claims = verify(receipt, keys, &expect, now)
        .map_err(|r| refuse(format!("{id}'s receipt is refused ({}): {r}", r.code())))?;
    if claims.jti != *id || claims.confine.as_deref() != Some(confine.as_str()) || claims.hosts != d.hosts {
        return Err(refuse(format!("{id}'s receipt is for another proposal or another box")));
    }
    let call = approved.of(p.kind).map_err(|e| refuse(format!("{id}'s approved call cannot be read: {e}")))?;
    let assent_core::payloads::Payload::ToolCall(call) = &*call else {
        return Err(refuse(format!("{id} is not an approved tool call")));
    };
    let command = call.input.get("command").and_then(serde_json::Value::as_str);
    match (command, &call.cwd) {
        (Some(c), Some(w)) => {
            Ok(Approved { command: c.to_string(), cwd: w.clone(), profile: confine, hosts: claims.hosts })
        }
        _ => Err(refuse(format!("{id} has no command and working folder to run"))),
    }
}

/// Seconds since the epoch.
pub fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// The ticket's file for `id`, when `id` is a proposal id as Assent makes them (`p_` and
/// lower-case letters and digits): the only names a ticket is looked for under.
fn file(home: &Home, id: &str) -> Option<std::path::PathBuf> {
    let ok = id.len() <= 64
        && id
            .strip_prefix("p_")
            .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
    ok.then(|| home.runs().join(format!("{id}.json")))
}

/// Leaves `p` (settled, allowed confined) for its run; one that cannot be written only costs
/// the run a request.
pub fn leave(home: &Home, p: &assent_core::Proposal) {
    let Some(path) = file(home, &p.id) else { return };
    let _ = std::fs::create_dir_all(home.runs());
    if let Ok(body) = serde_json::to_string(p) {
        // Written in place and not synced: the run starts after this process has ended, and a
        // ticket lost to a crash only costs the run a request.
        use std::io::Write;
        let _ = assent_secrets::owner::open_private(&path).and_then(|mut f| f.write_all(body.as_bytes()));
    }
}

/// What the ticket left for `id` approved, its receipt checked with the keys the server wrote;
/// none if anything is missing or not as it should be. The ticket is used once: renamed to
/// `ID.used` at once (removing a file just written can take a millisecond, on a disk mounted
/// with `discard` say), and removed by the server ([`prune`]).
pub fn claim(home: &Home, id: &str) -> Option<Approved> {
    let path = file(home, id)?;
    let text = std::fs::read(&path).ok()?;
    std::fs::rename(&path, path.with_extension("used")).ok()?;
    let p: assent_core::Proposal = serde_json::from_slice(&text).ok()?;
    let jwks: serde_json::Value = serde_json::from_slice(&std::fs::read(home.keys_json()).ok()?).ok()?;
    let keys = KeySet::from_json(&jwks).ok()?;
    (p.id == id).then(|| approved(&p, &keys, now()).ok()).flatten()
}

/// Writes the key set that signs receipts (a JWK Set) where runs read it; a set that cannot be
/// written only costs runs a request.
pub fn write_keys(home: &Home, jwks: &serde_json::Value) -> Result<(), String> {
    assent_secrets::owner::write_private(&home.keys_json(), &jwks.to_string()).map_err(|e| e.to_string())
}

/// Removes the tickets in `runs` that were used, and those older than an hour.
pub fn prune(runs: &Path) {
    let Ok(entries) = std::fs::read_dir(runs) else { return };
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for e in entries.flatten() {
        let used = e.path().extension().is_some_and(|x| x == "used");
        if e.file_type().is_ok_and(|t| t.is_file())
            && (used || e.metadata().and_then(|m| m.modified()).is_ok_and(|t| t < hour_ago))
        {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn tickets_older_than_an_hour_are_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let (old, new, used) =
            (dir.path().join("p_old.json"), dir.path().join("p_new.json"), dir.path().join("p_run.used"));
        for f in [&old, &new, &used] {
            std::fs::write(f, "{}").unwrap();
        }
        let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
        std::fs::File::options().write(true).open(&old).unwrap().set_modified(two_hours_ago).unwrap();
        prune(dir.path());
        assert!(!old.exists() && !used.exists(), "the old and the used ticket are gone");
        assert!(new.exists(), "a fresh ticket stays");
    }

    #[test]
    fn a_ticket_is_looked_for_only_under_a_proposal_id() {
        let home = Home { dir: "/h".into() };
        assert!(file(&home, "p_abc123").is_some());
        for bad in ["../x", "p_", "p_ABC", "p_a/b", "q_abc", &format!("p_{}", "a".repeat(70))] {
            assert!(file(&home, bad).is_none(), "{bad}");
        }
    }
}

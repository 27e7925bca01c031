//! What a proposal carries besides its kind and payload (its envelope), checked: the same checks
//! for a proposal filed and for one the rules are tested with; and a number JSON cannot carry
//! exactly, refused wherever a payload or an edit comes in.

use crate::error::CoreError;
use crate::proposal::NewProposal;
use serde_json::Value;

const TITLE_MAX: usize = 200;
const SUMMARY_MAX: usize = 10_000;
/// The longest reference (a session, group, revised proposal or audience) an envelope carries.
pub(super) const REF_MAX: usize = 200;

/// The text field `field` as given: at most `max` characters, no control characters (but line
/// breaks and tabs where it is not `single_line`); none if blank.
pub(super) fn text(field: &str, v: Option<String>, max: usize, single_line: bool) -> Result<Option<String>, CoreError> {
    let Some(v) = v else { return Ok(None) };
    if v.chars().count() > max {
        return Err(CoreError::invalid("invalid_field", format!("`{field}` is longer than {max} characters")));
    }
    let bad = |c: char| {
        if single_line { c.is_control() } else { c.is_control() && c != '\n' && c != '\t' && c != '\r' }
    };
    if v.chars().any(bad) {
        return Err(CoreError::invalid("invalid_field", format!("`{field}` contains control characters")));
    }
    Ok(if v.trim().is_empty() { None } else { Some(v) })
}

/// A proposal's envelope (all but its kind and payload), checked.
pub(super) struct Envelope {
    pub(super) expires_in: u64,
    pub(super) lease_secs: Option<u32>,
    pub(super) title: Option<String>,
    pub(super) summary: Option<String>,
    pub(super) session_id: Option<String>,
    pub(super) group_id: Option<String>,
    pub(super) supersedes: Option<String>,
    pub(super) audience: Option<String>,
}

/// Checks the envelope of `req`, taking its fields: what `propose` files, and what testing
/// the rules with a proposal body refuses the same way.
pub(super) fn envelope(req: &mut NewProposal, cfg: &super::EngineConfig) -> Result<Envelope, CoreError> {
    let expires_in = req.expires_in.unwrap_or(cfg.default_expires_in);
    if expires_in == 0 || expires_in > cfg.max_expires_in {
        return Err(CoreError::invalid(
            "invalid_field",
            format!("`expires_in` must be between 1 and {} seconds", cfg.max_expires_in),
        ));
    }
    Ok(Envelope {
        expires_in,
        lease_secs: super::lease::requested(req.lease_secs)?,
        title: text("title", req.title.take(), TITLE_MAX, true)?,
        summary: text("summary", req.summary.take(), SUMMARY_MAX, false)?,
        session_id: text("session_id", req.session_id.take(), REF_MAX, true)?,
        group_id: text("group_id", req.group_id.take(), REF_MAX, true)?,
        supersedes: text("supersedes", req.supersedes.take(), REF_MAX, true)?,
        audience: text("audience", req.audience.take(), REF_MAX, true)?,
    })
}

/// Refuses a number in `v` that a double cannot hold exactly (see
/// [`crate::canonical::beyond_i_json`]): `invalid_number`, naming where it is.
pub(super) fn refuse_beyond_i_json(v: &Value, what: &str) -> Result<(), CoreError> {
    match crate::canonical::beyond_i_json(v) {
        None => Ok(()),
        Some(at) => Err(CoreError::invalid(
            "invalid_number",
            format!(
                "the {what} holds a number at `{}` beyond 2^53 - 1 (9007199254740991), which a double cannot hold exactly: send it as a string",
                if at.is_empty() { "/" } else { &at }
            ),
        )),
    }
}

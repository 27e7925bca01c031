//! What the command line reads besides its arguments: JSON given as an argument, and standard
//! input.

use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::io::Read;

/// `s` as JSON; the error names `what` (an option) it came from.
pub(crate) fn parse_json(what: &str, s: &str) -> Result<Value> {
    serde_json::from_str(s).with_context(|| format!("{what} is not valid JSON"))
}

/// All of standard input, as text.
pub(crate) fn read_stdin() -> Result<String> {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).context("cannot read standard input")?;
    Ok(s)
}

/// A secret: typed at a hidden prompt, or all of standard input (one trailing newline left out).
pub(crate) fn read_secret() -> Result<String> {
    use std::io::IsTerminal;
    let secret = if std::io::stdin().is_terminal() {
        rpassword::prompt_password("secret (hidden): ").context("cannot read the secret")?
    } else {
        read_stdin()?
    };
    let secret = secret.trim_end_matches(['\n', '\r']).to_string();
    if secret.is_empty() {
        bail!("the secret is empty");
    }
    Ok(secret)
}

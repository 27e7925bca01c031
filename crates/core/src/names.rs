//! Names: what an agent's (and a credential's) name may be.

use crate::error::CoreError;

/// The longest name.
pub const AGENT_NAME_MAX: usize = 64;

/// Checks an agent name: 1-64 of `a-z 0-9 . _ -`, starting with a letter or digit.
pub fn validate_agent_name(name: &str) -> Result<(), CoreError> {
    let ok = !name.is_empty()
        && name.len() <= AGENT_NAME_MAX
        && name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(CoreError::invalid(
            "invalid_agent_name",
            "an agent name is 1-64 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit",
        ))
    }
}

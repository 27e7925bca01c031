//! A rule's glob read as text: built, measured (how much of it is literal, for a rule's
//! specificity), and read back as the one path it names when it has no wildcard.

use super::{BadRule, bad};
use globset::{Glob, GlobBuilder};

pub(super) fn glob(pattern: &str, literal_separator: bool) -> Result<Glob, BadRule> {
    GlobBuilder::new(pattern)
        .literal_separator(literal_separator)
        .build()
        .map_err(|e| bad("invalid_glob", format!("`{pattern}` is not a glob: {e}")))
}

/// A glob over paths (`/` separates names), whatever the case where disks compare so (Windows).
pub(super) fn path_glob(pattern: &str) -> Result<Glob, BadRule> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .case_insensitive(cfg!(windows))
        .build()
        .map_err(|e| bad("invalid_glob", format!("`{pattern}` is not a glob: {e}")))
}

/// Literal characters of a glob: what is left once its wildcards are taken out.
pub(super) fn literal_len(pattern: &str) -> usize {
    let (mut n, mut class) = (0, false);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '[' if !class => class = true,
            ']' if class => class = false,
            '\\' => {
                chars.next();
                n += 1;
            }
            '*' | '?' | '{' | '}' | ',' => {}
            _ if class => {}
            _ => n += 1,
        }
    }
    n
}

/// The part of a glob before its first wildcard.
pub(super) fn literal_prefix(pattern: &str) -> &str {
    let cut = pattern.find(['*', '?', '[', '{', '\\']).unwrap_or(pattern.len());
    &pattern[..cut]
}

/// A glob that names one path, as that path (`globset::escape`'s `[*]` read back as `*`); none
/// when it has a wildcard.
pub(super) fn literal_glob(pattern: &str) -> Option<String> {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '[' => {
                let (inner, close) = (chars.next()?, chars.next()?);
                if close != ']' {
                    return None;
                }
                out.push(inner);
            }
            '*' | '?' | '{' | '}' | ']' | '\\' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// Whether it has a wildcard (or an escape) anywhere.
pub(super) fn has_wildcard(s: &str) -> bool {
    s.contains(['*', '?', '[', '{', '\\'])
}

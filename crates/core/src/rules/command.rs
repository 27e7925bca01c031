//! Reading a command line: its words when it is one plain command, and every command it runs
//! (for `deny` and `ask` prefixes).

/// The words of one plain command, or none when it chains or substitutes another command (or
/// does not parse).
pub fn command_words(cmd: &str) -> Option<Vec<String>> {
    if chains(cmd) {
        return None;
    }
    shlex::split(cmd)
}

/// Where a command line runs more than one command: an operator outside quotes, a newline
/// anywhere, or a substitution outside single quotes. Calls `cut(at, len)` for each, in order;
/// stops at the first when `cut` returns false.
fn separators(cmd: &str, mut cut: impl FnMut(usize, usize) -> bool) {
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut prev = '\0';
    for (i, c) in cmd.char_indices() {
        if escaped {
            escaped = false;
            prev = c;
            continue;
        }
        let sep = match c {
            '\n' | '\r' => Some((i, 1)),
            '\\' if !single => {
                escaped = true;
                None
            }
            '\'' if !double => {
                single = !single;
                None
            }
            '"' if !single => {
                double = !double;
                None
            }
            '`' if !single => Some((i, 1)),
            '(' if !single && prev == '$' => Some((i - 1, 2)),
            '(' if !single && !double && (prev == '<' || prev == '>') => Some((i - 1, 2)),
            ')' if !single && !double => Some((i, 1)),
            ';' | '&' | '|' if !single && !double => Some((i, 1)),
            _ => None,
        };
        if let Some((at, len)) = sep
            && !cut(at, len)
        {
            return;
        }
        prev = c;
    }
}

/// Whether a command runs more than one command.
fn chains(cmd: &str) -> bool {
    let mut found = false;
    separators(cmd, |_, _| {
        found = true;
        false
    });
    found
}

/// Words a deny rule looks past at the start of a command.
const WRAPPERS: &[&str] = &[
    "nohup", "time", "command", "builtin", "exec", "noglob", "sudo", "doas", "env", "nice", "timeout", "stdbuf",
    "xargs",
];

fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

fn is_wrapper_argument(w: &str) -> bool {
    w.starts_with('-') || w.chars().next().is_some_and(|c| c.is_ascii_digit()) || is_assignment(w)
}

/// Every command a line runs, each with and without its leading assignments and wrappers.
pub(super) fn every_command(cmd: &str) -> Vec<Vec<String>> {
    let mut pieces = Vec::new();
    let mut start = 0;
    separators(cmd, |at, len| {
        pieces.push(&cmd[start..at]);
        start = at + len;
        true
    });
    pieces.push(&cmd[start..]);
    let mut out = Vec::new();
    for piece in pieces {
        let words = shlex::split(piece).unwrap_or_else(|| {
            // A piece cut out of a quoted string: its words, quotes dropped.
            piece.split_whitespace().map(|w| w.replace(['"', '\''], "")).collect()
        });
        if words.is_empty() {
            continue;
        }
        let mut rest = &words[..];
        loop {
            match rest.first() {
                Some(w) if is_assignment(w) => rest = &rest[1..],
                Some(w) if WRAPPERS.contains(&w.rsplit('/').next().unwrap_or(w)) => {
                    rest = &rest[1..];
                    while rest.first().is_some_and(|w| is_wrapper_argument(w)) {
                        rest = &rest[1..];
                    }
                }
                _ => break,
            }
        }
        if rest.len() != words.len() && !rest.is_empty() {
            out.push(rest.to_vec());
        }
        out.push(words);
    }
    out
}

pub(super) fn has_prefix(words: &[String], prefix: &[String]) -> bool {
    words.len() >= prefix.len() && words.iter().zip(prefix).all(|(a, b)| a == b)
}

//! A shell line of plain words run without the shell. `bash -c 'git status --short'` starts
//! bash only for bash to split three words and execute `git`: about a millisecond and a half of
//! a confined read on a small machine. Where the line is words that bash could only read one
//! way, the program is executed with those words directly, which is what bash would have done.
//!
//! A line qualifies only when every character of it is a letter, a digit, a blank or one of
//! `_ - . / , : = + @ %` (no quoting, expansion, globbing, redirection, comment, separator,
//! brace or tilde can then appear), and its first word is neither an assignment, a bash
//! builtin, a reserved word, nor a job (`%1`). Anything else runs by bash, as written. The
//! program must be found on the command's `PATH` (else bash says so, with its code), and one
//! the kernel cannot execute (a script with no `#!`) is handed to bash as well.

use std::ffi::OsString;

/// Bash's builtins and reserved words (`compgen -b -k`, bash 5.2), which are not programs on
/// the `PATH` even where one of the same name exists (`echo`, `test`, `[`).
const BASH_OWN: &[&str] = &[
    ".",
    ":",
    "[",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
    "if",
    "then",
    "else",
    "elif",
    "fi",
    "case",
    "esac",
    "for",
    "select",
    "while",
    "until",
    "do",
    "done",
    "in",
    "function",
    "time",
    "{",
    "}",
    "!",
    "[[",
    "]]",
    "coproc",
];

fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ',' | ':' | '=' | '+' | '@' | '%' | ' ' | '\t')
}

/// The words of `line` when bash would only split it into them and execute the first: see
/// the module's documentation. None for anything else.
pub fn plain_words(line: &str) -> Option<Vec<OsString>> {
    if !line.chars().all(plain) {
        return None;
    }
    let words: Vec<&str> = line.split([' ', '\t']).filter(|w| !w.is_empty()).collect();
    let first = *words.first()?;
    if first.contains('=') || first.starts_with('%') || first.starts_with('-') || BASH_OWN.contains(&first) {
        return None;
    }
    Some(words.into_iter().map(OsString::from).collect())
}

/// `argv` as it is executed: a `bash -c LINE` whose line is plain words (see [`plain_words`])
/// as those words, anything else as it is.
pub fn unshelled(argv: &[OsString]) -> Option<Vec<OsString>> {
    match argv {
        [bash, c, line] if bash == "bash" && c == "-c" => plain_words(line.to_str()?),
        _ => None,
    }
}

/// The program bash would find for `name` on `path`: the first executable file of that name in
/// its folders. None where the search is not bash's alone to say: a folder on it that is not
/// absolute (bash looks in the working folder then), or nothing found (bash says so).
pub fn on_path(name: &std::ffi::OsStr, path: &std::ffi::OsStr) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if name.as_encoded_bytes().contains(&b'/') {
        return Some(name.into());
    }
    for dir in std::env::split_paths(path) {
        if !dir.is_absolute() {
            return None;
        }
        let p = dir.join(name);
        if std::fs::metadata(&p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0) {
            return Some(p);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Option<Vec<String>> {
        plain_words(line).map(|w| w.into_iter().map(|w| w.into_string().unwrap_or_default()).collect())
    }

    #[test]
    fn plain_lines_are_their_words() {
        assert_eq!(words("git status --short"), Some(vec!["git".into(), "status".into(), "--short".into()]));
        assert_eq!(words("  ls\t-la  src/a,b:c  "), Some(vec!["ls".into(), "-la".into(), "src/a,b:c".into()]));
        assert_eq!(
            words("git log --format=%h -n 3"),
            Some(vec!["git".into(), "log".into(), "--format=%h".into(), "-n".into(), "3".into()])
        );
        assert_eq!(words("./scripts/check.sh x@y"), Some(vec!["./scripts/check.sh".into(), "x@y".into()]));
    }

    #[test]
    fn anything_bash_reads_otherwise_stays_bash() {
        for line in [
            "",
            "   ",
            "echo hi",
            "cd src",
            "test -f x",
            "[ -f x ]",
            "true",
            "kill 1",
            "printf x",
            "pwd",
            "time ls",
            "if",
            "! ls",
            "%1",
            "-x",
            "A=1 ls",
            "A=1",
            "ls *",
            "ls ?",
            "ls [a]",
            "ls ~",
            "ls ~/x",
            "ls $HOME",
            "ls `id`",
            "ls $(id)",
            "ls 'a b'",
            "ls \"a\"",
            "ls a\\ b",
            "ls; id",
            "ls && id",
            "ls | id",
            "ls > x",
            "ls < x",
            "ls & id",
            "ls # c",
            "ls {a,b}",
            "ls\nid",
            "ls (",
            "ls !x",
            "ls ^x",
            "ls é",
        ] {
            assert_eq!(words(line), None, "{line:?}");
        }
    }

    #[test]
    fn only_a_bash_c_line_is_unshelled() {
        let os = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(unshelled(&os(&["bash", "-c", "git status"])), Some(os(&["git", "status"])));
        assert_eq!(unshelled(&os(&["bash", "-c", "echo hi"])), None);
        assert_eq!(unshelled(&os(&["sh", "-c", "git status"])), None);
        assert_eq!(unshelled(&os(&["bash", "-c", "git status", "x"])), None);
        assert_eq!(unshelled(&os(&["git", "status"])), None);
    }
}

//! A shell word's value, as bash would give it before running the command: every quoting form
//! undone (`'…'`, `"…"`, `$'…'` with its escapes, `\x`), `~` expanded, and anything whose value
//! is only known when the line runs (a variable, a substitution, arithmetic, brace expansion)
//! left unknown. Substitutions inside a word are returned to be read as commands themselves.

use brush_parser::ParserOptions;
use brush_parser::word::{TildeExpr, WordPiece, WordPieceWithSource};

/// A word's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word {
    /// Known exactly.
    Lit(String),
    /// A glob pattern bash expands to file names (an unquoted `*`, `?` or `[`): the pattern.
    Glob(String),
    /// Known only when the line runs: the word as written.
    Unknown(String),
}

impl Word {
    /// Its exact value, when known.
    pub fn lit(&self) -> Option<&str> {
        match self {
            Word::Lit(s) => Some(s),
            _ => None,
        }
    }

    /// The text it stands for: its value, a glob's pattern, an unknown word as written.
    pub fn text(&self) -> &str {
        match self {
            Word::Lit(s) | Word::Glob(s) | Word::Unknown(s) => s,
        }
    }
}

/// What reading a word found besides its value.
#[derive(Debug, Default)]
pub struct Found {
    /// Command substitutions (`$(…)`, backticks), their text, to be read as commands.
    pub substitutions: Vec<String>,
    /// Why part of it cannot be read safely (a substitution inside a parameter expansion or
    /// arithmetic): the whole line is then opaque.
    pub opaque: Option<String>,
    /// It uses `$'…'` quoting: read exactly, but no line an allow covers uses it.
    pub ansi_c: bool,
}

/// Where `~` leads.
pub struct Tilde<'a> {
    /// The home folder.
    pub home: Option<&'a str>,
    /// The working folder (`~+`).
    pub cwd: Option<&'a str>,
}

/// Reads a word.
pub fn resolve(raw: &str, tilde: &Tilde<'_>, found: &mut Found) -> Word {
    let opts = ParserOptions::default();
    let pieces = match brush_parser::word::parse(raw, &opts) {
        Ok(p) => p,
        Err(_) => {
            found.opaque.get_or_insert_with(|| format!("the word `{}` does not parse", short(raw)));
            return Word::Unknown(raw.to_string());
        }
    };
    let mut acc = Acc::default();
    pieces_into(raw, &pieces, false, tilde, found, &mut acc);
    if acc.unknown {
        Word::Unknown(raw.to_string())
    } else if acc.glob {
        Word::Glob(acc.text)
    } else {
        Word::Lit(acc.text)
    }
}

#[derive(Default)]
struct Acc {
    text: String,
    glob: bool,
    unknown: bool,
}

fn short(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

fn pieces_into(
    raw: &str,
    pieces: &[WordPieceWithSource],
    quoted: bool,
    tilde: &Tilde<'_>,
    found: &mut Found,
    acc: &mut Acc,
) {
    for p in pieces {
        match &p.piece {
            WordPiece::Text(t) => {
                if !quoted {
                    // Unquoted text bash expands further: globs, brace expansion, extglob.
                    if t.contains(['*', '?', '[']) {
                        acc.glob = true;
                    }
                    if t.contains('{') && (t.contains(',') || t.contains("..")) || t.contains('(') {
                        acc.unknown = true;
                    }
                }
                acc.text.push_str(t);
            }
            WordPiece::SingleQuotedText(t) => acc.text.push_str(t),
            WordPiece::AnsiCQuotedText(t) => {
                found.ansi_c = true;
                match ansi_c(t) {
                    Some(s) => acc.text.push_str(&s),
                    None => acc.unknown = true,
                }
            }
            WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
                pieces_into(raw, inner, true, tilde, found, acc);
            }
            WordPiece::TildeExpansion(t) => match (t, tilde.home, tilde.cwd) {
                (TildeExpr::Home, Some(h), _) => acc.text.push_str(h),
                (TildeExpr::WorkingDir, _, Some(c)) => acc.text.push_str(c),
                _ => acc.unknown = true,
            },
            WordPiece::EscapeSequence(e) => {
                // `\x` is `x`; a backslash-newline joins lines.
                let c = e.strip_prefix('\\').unwrap_or(e);
                if c != "\n" {
                    acc.text.push_str(c);
                }
            }
            WordPiece::CommandSubstitution(s) => {
                acc.unknown = true;
                found.substitutions.push(s.clone());
            }
            WordPiece::BackquotedCommandSubstitution(s) => {
                acc.unknown = true;
                found.substitutions.push(unescape_backquoted(s));
            }
            WordPiece::ParameterExpansion(_) | WordPiece::ArithmeticExpression(_) => {
                acc.unknown = true;
                // A substitution can hide inside (`${x:-$(rm y)}`, `$(( $(rm y) ))`): not
                // read piece by piece, so the line is opaque.
                let text = raw.get(p.start_index..p.end_index).unwrap_or(raw);
                if text.contains("$(") || text.contains('`') || text.contains("<(") || text.contains(">(") {
                    found.opaque.get_or_insert_with(|| {
                        format!("a command substitution inside an expansion (`{}`)", short(text))
                    });
                }
            }
        }
    }
}

/// The text of a backquoted substitution with its escapes undone (`\``, `\\`, `\$`).
fn unescape_backquoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.peek(), Some('`' | '\\' | '$')) {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The value of `$'…'` text, as bash decodes it; none for an escape it cannot be sure of.
pub fn ansi_c(t: &str) -> Option<String> {
    let mut out = String::with_capacity(t.len());
    let mut chars = t.chars().peekable();
    let digits = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, radix: u32, max: usize| {
        let mut v: u32 = 0;
        let mut n = 0;
        while n < max {
            match chars.peek().and_then(|c| c.to_digit(radix)) {
                Some(d) => {
                    v = v.checked_mul(radix)?.checked_add(d)?;
                    chars.next();
                    n += 1;
                }
                None => break,
            }
        }
        (n > 0).then_some(v)
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let decoded = match e {
            'a' => '\x07',
            'b' => '\x08',
            'e' | 'E' => '\x1b',
            'f' => '\x0c',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\x0b',
            '\\' => '\\',
            '\'' => '\'',
            '"' => '"',
            '?' => '?',
            '0'..='7' => {
                let mut v = e.to_digit(8)?;
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                char::from_u32(v & 0xff)?
            }
            'x' => char::from_u32(digits(&mut chars, 16, 2)?)?,
            'u' => char::from_u32(digits(&mut chars, 16, 4)?)?,
            'U' => char::from_u32(digits(&mut chars, 16, 8)?)?,
            // `\cX` control characters, and anything else: not decoded here.
            _ => return None,
        };
        if decoded == '\0' {
            // bash ends the string at a NUL.
            break;
        }
        out.push(decoded);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(raw: &str) -> Word {
        let mut f = Found::default();
        resolve(raw, &Tilde { home: Some("/home/u"), cwd: Some("/w") }, &mut f)
    }

    #[test]
    fn quoting_forms() {
        let lit = |s: &str| Word::Lit(s.to_string());
        assert_eq!(r("rm"), lit("rm"));
        assert_eq!(r("\\rm"), lit("rm"));
        assert_eq!(r("\"rm\""), lit("rm"));
        assert_eq!(r("r''m"), lit("rm"));
        assert_eq!(r("'r'\"m\""), lit("rm"));
        assert_eq!(r("$'\\x72m'"), lit("rm"));
        assert_eq!(r("$'\\162m'"), lit("rm"));
        assert_eq!(r("$'\\''"), lit("'"));
        assert_eq!(r("~/x"), lit("/home/u/x"));
        assert_eq!(r("\"~/x\""), lit("~/x"));
        assert!(matches!(r("rm${IFS}V"), Word::Unknown(_)));
        assert!(matches!(r("$(echo rm)"), Word::Unknown(_)));
        assert!(matches!(r("r{m,x}"), Word::Unknown(_)));
        assert_eq!(r("*.ts"), Word::Glob("*.ts".into()));
        assert_eq!(r("'*.ts'"), lit("*.ts"));
    }
}

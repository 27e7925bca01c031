//! One command's words, read against the program table: what it does, which of its words are
//! paths it reads or writes, its words with global options set aside, and the commands it
//! runs itself (`find -exec`).

use crate::effects::Effects;
use crate::table::{Operands, Program, Step, Table, Value, operand_matches};
use crate::word::Word;
use std::collections::HashMap;

/// A command, read.
#[derive(Debug, Clone, Default)]
pub struct Classified {
    /// What it does.
    pub effects: Effects,
    /// The program, its subcommands, then the rest of its words, global options left out:
    /// what rule prefixes are compared with. `None` for a word known only when it runs.
    pub canonical: Vec<Option<String>>,
    /// How many leading words of `canonical` name the program and its subcommands.
    pub named: usize,
    /// Paths it reads.
    pub reads: Vec<Word>,
    /// Paths it writes or deletes.
    pub writes: Vec<Word>,
    /// Whether the table knows it.
    pub known: bool,
    /// Commands it runs (`find -exec`), as words.
    pub runs: Vec<Vec<Word>>,
    /// What its options and operands added to what its entry does (`--registry=URL` adds the
    /// network: a host its entry does not name).
    pub raised: Effects,
    /// The hosts its entry says it reaches (the table's `reaches`).
    pub reaches: Vec<String>,
}

impl Classified {
    /// Adds what a word of the command (an option, an operand, a subcommand not known) adds to
    /// what its entry does: counted in `raised` too.
    fn raise(&mut self, e: Effects) {
        self.effects |= e;
        self.raised |= e;
    }
}

/// A word as rules compare it: its value, a glob's pattern (rules see it as written; deny
/// rules take it for any word it may expand to), nothing for a word known only as it runs.
fn word_text(w: &Word) -> Option<String> {
    match w {
        Word::Lit(s) | Word::Glob(s) => Some(s.clone()),
        Word::Unknown(_) => None,
    }
}

/// Reads a program's words (`args` after the program's own name).
pub fn classify(table: &Table, name: &str, args: &[Word]) -> Classified {
    let mut out = Classified { canonical: vec![Some(name.to_string())], named: 1, ..Default::default() };
    match table.get(name) {
        None => {
            // Known only by its name: every option is unknown; operands are not paths it is
            // known to touch.
            out.effects = Effects::UNKNOWN;
            for a in args {
                out.canonical.push(word_text(a));
            }
        }
        Some(p) => {
            out.known = true;
            match &p.expression {
                Some(e) => find(p, e, args, &mut out),
                None => program(p, args, &mut out),
            }
        }
    }
    out
}

/// What reading an option found.
enum OptionRead {
    /// A known option: its value (if any) and what it adds; `next` when it took the next word.
    Known { value: Option<Word>, kind: Value, raises: Effects, next: bool },
    /// Not known.
    Unknown,
}

fn read_option(p: &Program, s: &str, next: Option<&Word>) -> OptionRead {
    let with_value = |kind: Value, raises: Effects, inline: Option<&str>| match (kind, inline) {
        (Value::None, None) => OptionRead::Known { value: None, kind, raises, next: false },
        (Value::None, Some(_)) => OptionRead::Unknown,
        (Value::Optional, None) => OptionRead::Known { value: None, kind, raises, next: false },
        (_, Some(v)) => OptionRead::Known { value: Some(Word::Lit(v.to_string())), kind, raises, next: false },
        (_, None) => OptionRead::Known {
            value: Some(next.cloned().unwrap_or(Word::Lit(String::new()))),
            kind,
            raises,
            next: true,
        },
    };
    if let Some(o) = p.options.get(s) {
        return with_value(o.value, o.raises, None);
    }
    if s.starts_with("--") {
        if let Some((n, v)) = s.split_once('=')
            && let Some(o) = p.options.get(n)
        {
            return with_value(o.value, o.raises, Some(v));
        }
        return OptionRead::Unknown;
    }
    if p.numeric && s.len() > 1 && s[1..].chars().all(|c| c.is_ascii_digit()) {
        return OptionRead::Known { value: None, kind: Value::None, raises: Effects::NONE, next: false };
    }
    if s.starts_with('+') {
        return OptionRead::Unknown;
    }
    // A cluster of short options: `-la`, `-n5`, `-C dir`.
    let mut raises = Effects::NONE;
    let chars: Vec<(usize, char)> = s.char_indices().skip(1).collect();
    for (i, (at, c)) in chars.iter().enumerate() {
        let Some(o) = p.options.get(&format!("-{c}")) else {
            if p.numeric && s[*at..].chars().all(|c| c.is_ascii_digit()) {
                return OptionRead::Known { value: None, kind: Value::None, raises, next: false };
            }
            return OptionRead::Unknown;
        };
        raises |= o.raises;
        if o.value != Value::None {
            let rest = &s[at + c.len_utf8()..];
            let last = i + 1 == chars.len();
            return match with_value(o.value, raises, (!last).then_some(rest)) {
                OptionRead::Known { value, kind, next, .. } => OptionRead::Known { value, kind, raises, next },
                u => u,
            };
        }
    }
    OptionRead::Known { value: None, kind: Value::None, raises, next: false }
}

/// Files the option `s` of `p` (its value `next` when it takes the next word) in `out`, and a
/// program it gives (`sed -e SCRIPT`) in `programs`. Returns how many more words it took.
fn option(p: &Program, s: &str, next: Option<&Word>, out: &mut Classified, programs: &mut Vec<Word>) -> usize {
    match read_option(p, s, next) {
        OptionRead::Known { value, kind, raises, next: took } => {
            out.raise(raises);
            // A program's global options (before its subcommand) are not part of its words.
            let global = p.sub.is_some();
            if !global {
                out.canonical.push(Some(s.to_string()));
                if took {
                    out.canonical.push(next.and_then(word_text));
                }
            }
            if let Some(v) = value {
                match kind {
                    Value::ReadPath => out.reads.push(v),
                    Value::WritePath => out.writes.push(v),
                    Value::Program => programs.push(v),
                    Value::Word | Value::None | Value::Optional => {}
                }
            }
            usize::from(took)
        }
        OptionRead::Unknown => {
            out.raise(p.other_options);
            out.canonical.push(Some(s.to_string()));
            0
        }
    }
}

fn program(p: &Program, args: &[Word], out: &mut Classified) {
    out.effects |= p.does;
    out.reaches.clone_from(&p.reaches);
    let mut operands: Vec<Word> = Vec::new();
    let mut programs: Vec<Word> = Vec::new();
    let mut end = false;
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        i += 1;
        if !end {
            match w {
                Word::Lit(s) if s == "--" => {
                    end = true;
                    if let Some((_, e)) = p.raise_operands.iter().find(|(pat, _)| pat == "--") {
                        out.raise(*e);
                    }
                    out.canonical.push(Some(s.clone()));
                    if p.passes_rest {
                        // The rest goes to the script it runs, whose effects are its own.
                        out.canonical.extend(args[i..].iter().map(word_text));
                        return finish(p, operands, programs, out);
                    }
                    continue;
                }
                Word::Lit(s)
                    if (s.starts_with('-') && s.len() > 1) || (s.starts_with('+') && p.options.contains_key("+*")) =>
                {
                    let is_sub = p.sub.as_ref().is_some_and(|subs| subs.contains_key(s.as_str()));
                    if !is_sub {
                        i += option(p, s, args.get(i), out, &mut programs);
                        continue;
                    }
                }
                Word::Unknown(_) => {
                    // It could be an option as well as an operand.
                    out.raise(p.other_options);
                }
                Word::Glob(g) if g.starts_with(['*', '?', '[']) => {
                    // It could expand to a name that reads as an option.
                    out.raise(p.other_options);
                }
                _ => {}
            }
        }
        if let Some(subs) = &p.sub
            && operands.is_empty()
        {
            match w.lit().and_then(|s| subs.get(s)) {
                Some(sp) => {
                    out.canonical.push(word_text(w));
                    out.named = out.canonical.len();
                    // A subcommand's own effects replace the program's ("unknown" when none).
                    out.effects = out.effects.minus(p.does);
                    program(sp, &args[i..], out);
                }
                None => {
                    out.raise(Effects::UNKNOWN);
                    out.canonical.push(word_text(w));
                    out.canonical.extend(args[i..].iter().map(word_text));
                }
            }
            return;
        }
        out.canonical.push(word_text(w));
        if let Word::Lit(s) = w {
            for (pat, e) in &p.raise_operands {
                if pat != "--" && operand_matches(pat, s) {
                    out.raise(*e);
                }
            }
        }
        operands.push(w.clone());
        if p.operand_ends_options {
            end = true;
        }
    }
    if p.sub.is_some() {
        // A program that needs a subcommand and was given none.
        return;
    }
    finish(p, operands, programs, out);
}

fn finish(p: &Program, operands: Vec<Word>, programs: Vec<Word>, out: &mut Classified) {
    if p.read_operands.is_some_and(|n| operands.len() > n) {
        out.raise(p.more_operands);
    }
    let mut ops = operands.into_iter();
    match p.operands {
        Operands::Read => out.reads.extend(ops),
        Operands::Write | Operands::Delete | Operands::Move => out.writes.extend(ops),
        Operands::Copy => {
            let mut all: Vec<Word> = ops.collect();
            if all.len() >= 2
                && let Some(last) = all.pop()
            {
                out.writes.push(last);
            }
            out.reads.extend(all);
        }
        Operands::Pattern => {
            if programs.is_empty() {
                ops.next();
            }
            out.reads.extend(ops);
        }
        Operands::Script => {
            let mut scripts = programs;
            if scripts.is_empty()
                && let Some(s) = ops.next()
            {
                scripts.push(s);
            }
            for s in &scripts {
                out.effects |= script(p.script.as_deref(), s);
            }
            out.reads.extend(ops);
        }
        Operands::Args => {}
    }
}

/// What a sed, awk or jq program does beyond reading.
fn script(checker: Option<&str>, s: &Word) -> Effects {
    let Some(text) = s.lit() else { return Effects::UNKNOWN };
    let safe = match checker {
        Some("sed") => sed_only_reads(text),
        Some("awk") => !["system", "|", ">", "getline", "close", "fflush", "@load", "@include"]
            .iter()
            .any(|bad| text.contains(bad)),
        Some("jq") => true,
        _ => false,
    };
    if safe { Effects::NONE } else { Effects::WRITE | Effects::EXEC }
}

/// Whether a sed script only prints: addresses, and the commands that read and print (`p`,
/// `d`, `q`, `s///` without the `w` and `e` flags, `y`, labels and branches, `a`/`i`/`c` text).
/// Never `w`, `W`, `r`, `R`, `e` or `F`, nor anything it does not know.
pub fn sed_only_reads(s: &str) -> bool {
    let b: Vec<char> = s.chars().collect();
    let mut i = 0;
    let delimited = |i: &mut usize, d: char| -> bool {
        // Scans to the next unescaped `d`; true when found.
        while *i < b.len() {
            match b[*i] {
                '\\' => *i += 2,
                c if c == d => {
                    *i += 1;
                    return true;
                }
                '\n' => return false,
                _ => *i += 1,
            }
        }
        false
    };
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() || c == ';' || c == '}' || c == '{' || c == '!' || c == ',' {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() || c == '$' || c == '+' || c == '~' {
            i += 1;
            continue;
        }
        if c == '/' {
            i += 1;
            if !delimited(&mut i, '/') {
                return false;
            }
            while i < b.len() && matches!(b[i], 'I' | 'M') {
                i += 1;
            }
            continue;
        }
        i += 1;
        match c {
            'p' | 'd' | 'D' | 'n' | 'N' | 'P' | 'h' | 'H' | 'g' | 'G' | 'x' | 'z' | '=' | 'l' => {}
            'q' | 'Q' => {
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            ':' | 'b' | 't' | 'T' => {
                while i < b.len() && b[i] != ';' && b[i] != '\n' && b[i] != '}' {
                    i += 1;
                }
            }
            'a' | 'i' | 'c' => {
                // Text to print, to the end of the line.
                while i < b.len() && b[i] != '\n' {
                    i += 1;
                }
            }
            's' | 'y' => {
                let Some(&d) = b.get(i) else { return false };
                if d == '\\' || d == '\n' {
                    return false;
                }
                i += 1;
                if !delimited(&mut i, d) || !delimited(&mut i, d) {
                    return false;
                }
                if c == 's' {
                    while i < b.len() && (b[i].is_ascii_digit() || matches!(b[i], 'g' | 'p' | 'i' | 'I' | 'm' | 'M')) {
                        i += 1;
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

/// An expression's program (`find`): options before the paths, the paths, then the tests and
/// actions of its expression ([`Program::expression`]); a word not in it is `unknown`.
fn find(p: &Program, expression: &HashMap<String, Step>, args: &[Word], out: &mut Classified) {
    out.effects |= p.does;
    let mut i = 0;
    // Options before the paths.
    while let Some(Word::Lit(s)) = args.get(i) {
        let Some(raises) = p.before_paths.get(s.as_str()) else { break };
        out.effects |= *raises;
        out.canonical.push(Some(s.clone()));
        i += 1;
    }
    let mut paths = 0;
    while let Some(w) = args.get(i) {
        if matches!(w, Word::Lit(s) if s.starts_with('-') || matches!(s.as_str(), "(" | "!" | ")" | ",")) {
            break;
        }
        out.canonical.push(word_text(w));
        out.reads.push(w.clone());
        paths += 1;
        i += 1;
    }
    if paths == 0 {
        out.reads.push(Word::Lit(".".into()));
    }
    while let Some(w) = args.get(i) {
        out.canonical.push(word_text(w));
        i += 1;
        let Some(step) = w.lit().and_then(|s| expression.get(s)) else {
            out.effects |= Effects::UNKNOWN;
            continue;
        };
        out.effects |= step.raises;
        for kind in &step.takes {
            let Some(v) = args.get(i) else { break };
            out.canonical.push(word_text(v));
            i += 1;
            match kind {
                Value::ReadPath => out.reads.push(v.clone()),
                Value::WritePath => out.writes.push(v.clone()),
                _ => {}
            }
        }
        if step.command {
            let mut cmd = Vec::new();
            while let Some(a) = args.get(i) {
                out.canonical.push(word_text(a));
                i += 1;
                if matches!(a.lit(), Some(";" | "+")) {
                    break;
                }
                cmd.push(a.clone());
            }
            out.runs.push(cmd);
        }
    }
}

//! The table's text read: its entries as written (`Raw…`, kept close to the TOML), then checked
//! and turned into the [`Table`] the reader uses.

use super::{Example, Expect, Names, Operands, Opt, Program, Step, Table, Value, Wrapper};
use crate::effects::Effects;
use crate::opts::Spec;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawProgram {
    does: Option<String>,
    operands: Option<Operands>,
    #[serde(default)]
    options: String,
    other_options: Option<String>,
    #[serde(default)]
    numeric: bool,
    #[serde(default)]
    raise_operands: BTreeMap<String, String>,
    script: Option<String>,
    #[serde(default)]
    sub: BTreeMap<String, RawProgram>,
    #[serde(default)]
    alias: Vec<String>,
    #[serde(default)]
    passes_rest: bool,
    #[serde(default)]
    operand_ends_options: bool,
    #[serde(default)]
    same: Vec<String>,
    read_operands: Option<usize>,
    more_operands: Option<String>,
    expression: Option<String>,
    before_paths: Option<String>,
    reaches: Option<Vec<String>>,
    #[serde(default)]
    examples: RawExamples,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawExamples {
    /// Lines the built-in read-only rule allows.
    #[serde(default)]
    reads: Vec<String>,
    /// Lines it asks about.
    #[serde(default)]
    asks: Vec<String>,
    /// Lines and what they do.
    #[serde(default)]
    effects: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawWrapper {
    #[serde(default)]
    options: String,
    #[serde(default)]
    not_plain: String,
    #[serde(default)]
    positionals: usize,
    adds: Option<String>,
    #[serde(default)]
    numeric: bool,
    #[serde(default)]
    alias: Vec<String>,
    #[serde(default)]
    examples: RawExamples,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawEnvironment {
    #[serde(default)]
    changes_programs: String,
    #[serde(default)]
    changes_programs_prefixes: String,
    #[serde(default)]
    harmless: String,
    #[serde(default)]
    harmless_prefixes: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    version: u32,
    #[serde(default, rename = "build-and-test")]
    build_and_test: Vec<String>,
    #[serde(default)]
    registries: Vec<String>,
    #[serde(default)]
    environment: RawEnvironment,
    #[serde(default)]
    shells: String,
    #[serde(default, rename = "package-runners")]
    package_runners: String,
    #[serde(default, rename = "package-managers")]
    package_managers: String,
    #[serde(default)]
    wrapper: BTreeMap<String, RawWrapper>,
    #[serde(default)]
    runner: BTreeMap<String, RawWrapper>,
    program: BTreeMap<String, RawProgram>,
}

/// The hosts an entry reaches, checked: each a host name as rules compare it, or
/// [`GIT_REMOTE`](super::GIT_REMOTE).
fn reaches(name: &str, hosts: &[String]) -> Result<Vec<String>, String> {
    hosts
        .iter()
        .map(|h| match crate::host::normalize(h) {
            _ if h == super::GIT_REMOTE => Ok(h.clone()),
            Some(n) if n == *h => Ok(n),
            _ => Err(format!("{name}: `reaches` names `{h}`, which is not a host name as rules write it")),
        })
        .collect()
}

/// Reads one token of the option language: `NAME`, `NAME=` (takes a word), `NAME=path`,
/// `NAME=out`, `NAME=program`, each optionally followed by `:effect+effect`.
fn option(token: &str) -> Result<(String, Opt), String> {
    let (head, raises) = match token.split_once(':') {
        Some((h, e)) if h.len() > 1 => (h, Effects::parse(e)?),
        _ => (token, Effects::NONE),
    };
    let (name, value) = match head.split_once('=') {
        None => (head, Value::None),
        Some((n, "")) => (n, Value::Word),
        Some((n, "path")) => (n, Value::ReadPath),
        Some((n, "out")) => (n, Value::WritePath),
        Some((n, "program")) => (n, Value::Program),
        Some((_, other)) => return Err(format!("`{token}`: no value kind `{other}`")),
    };
    if !(name.starts_with('-') || name.starts_with('+')) || name.len() < 2 {
        return Err(format!("`{token}` is not an option"));
    }
    let raises = if value == Value::WritePath { raises | Effects::WRITE } else { raises };
    Ok((name.to_string(), Opt { value, raises }))
}

/// Reads one token of an expression: the option language, plus `NAME=command` (a command up to
/// `;` or `+`) and several values joined by `,` (`-fprintf=out,`: a written path, then a word).
fn step(token: &str) -> Result<(String, Step), String> {
    let (head, raises) = match token.split_once(':') {
        Some((h, e)) if h.len() > 1 => (h, Effects::parse(e)?),
        _ => (token, Effects::NONE),
    };
    let (name, values) = head.split_once('=').map_or((head, None), |(n, v)| (n, Some(v)));
    let mut s = Step { takes: Vec::new(), command: false, raises };
    match values {
        None => {}
        Some("command") => s.command = true,
        Some(v) => {
            for kind in v.split(',') {
                let (_, o) = option(&format!("-x={kind}"))?;
                s.raises |= o.raises;
                s.takes.push(o.value);
            }
        }
    }
    let operator = matches!(name, "!" | "(" | ")" | ",");
    if !operator && (!name.starts_with('-') || name.len() < 2) {
        return Err(format!("`{token}` is not a test or action"));
    }
    Ok((name.to_string(), s))
}

/// The examples of `entry`, checked later.
fn examples(entry: &str, raw: &RawExamples, out: &mut Vec<Example>) -> Result<(), String> {
    let mut add = |line: &str, expect| out.push(Example { entry: entry.to_string(), line: line.to_string(), expect });
    for l in &raw.reads {
        add(l, Expect::Reads(true));
    }
    for l in &raw.asks {
        add(l, Expect::Reads(false));
    }
    for (l, e) in &raw.effects {
        add(l, Expect::Effects(Effects::parse(e).map_err(|e| format!("{entry}: {e}"))?));
    }
    Ok(())
}

fn wrapper(name: &str, raw: &RawWrapper) -> Result<Wrapper, String> {
    let opts = Spec::parse(&raw.options, raw.numeric).map_err(|e| format!("wrapper.{name}: {e}"))?;
    let not_plain: Vec<String> = raw.not_plain.split_whitespace().map(str::to_string).collect();
    if let Some(o) = not_plain.iter().find(|o| !opts.has(o)) {
        return Err(format!("wrapper.{name}: `not-plain` names `{o}`, which is not among its options"));
    }
    let adds = match &raw.adds {
        Some(a) => Effects::parse(a).map_err(|e| format!("wrapper.{name}: {e}"))?,
        None => Effects::NONE,
    };
    Ok(Wrapper { opts, not_plain, positionals: raw.positionals, adds })
}

fn program(name: &str, raw: &RawProgram, inherited: Option<&Program>) -> Result<Program, String> {
    let does = match &raw.does {
        Some(d) => Effects::parse(d).map_err(|e| format!("{name}: {e}"))?,
        None => inherited.map_or(Effects::UNKNOWN, |p| p.does),
    };
    let mut options = HashMap::new();
    for token in raw.options.split_whitespace() {
        let (n, o) = option(token).map_err(|e| format!("{name}: {e}"))?;
        match options.get(&n).copied() {
            None => {
                options.insert(n, o);
            }
            // Listed as a flag and as taking a word: the word is optional, and only joined.
            Some(prev) if (prev.value == Value::None) != (o.value == Value::None) => {
                let value = if prev.value == Value::None { o.value } else { prev.value };
                let value = if value == Value::Word { Value::Optional } else { value };
                options.insert(n, Opt { value, raises: prev.raises | o.raises });
            }
            Some(_) => return Err(format!("{name}: `{n}` is listed twice")),
        }
    }
    let other_options = match &raw.other_options {
        Some(o) => Effects::parse(o).map_err(|e| format!("{name}: {e}"))?,
        None => Effects::UNKNOWN,
    };
    let raise_operands = raw
        .raise_operands
        .iter()
        .map(|(k, v)| Effects::parse(v).map(|e| (k.clone(), e)).map_err(|e| format!("{name}: {e}")))
        .collect::<Result<_, _>>()?;
    let mut p = Program {
        does,
        operands: raw.operands.unwrap_or(Operands::Args),
        options,
        other_options,
        numeric: raw.numeric,
        raise_operands,
        script: raw.script.clone(),
        sub: None,
        passes_rest: raw.passes_rest,
        operand_ends_options: raw.operand_ends_options,
        same: raw.same.iter().map(|s| s.split_whitespace().map(str::to_string).collect()).collect(),
        read_operands: raw.read_operands,
        more_operands: match &raw.more_operands {
            Some(m) => Effects::parse(m).map_err(|e| format!("{name}: {e}"))?,
            None => Effects::NONE,
        },
        expression: match &raw.expression {
            Some(e) => Some(
                e.split_whitespace()
                    .map(step)
                    .collect::<Result<HashMap<_, _>, _>>()
                    .map_err(|e| format!("{name}: {e}"))?,
            ),
            None => None,
        },
        before_paths: raw
            .before_paths
            .iter()
            .flat_map(|b| b.split_whitespace())
            .map(|t| option(t).map(|(n, o)| (n, o.raises)))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{name}: {e}"))?,
        reaches: reaches(name, raw.reaches.as_deref().unwrap_or_default())?,
    };
    if p.read_operands.is_some() == p.more_operands.is_empty() {
        return Err(format!("{name}: `read-operands` and `more-operands` go together"));
    }
    for set in &p.same {
        if let Some(o) = set.iter().find(|o| !p.options.contains_key(*o)) {
            return Err(format!("{name}: `same` names `{o}`, which is not among its options"));
        }
    }
    if !raw.sub.is_empty() {
        let mut subs = BTreeMap::new();
        for (s, r) in &raw.sub {
            let mut sp = program(&format!("{name} {s}"), r, None)?;
            if r.reaches.is_none() {
                // A subcommand reaches what its program does unless it says otherwise.
                sp.reaches.clone_from(&p.reaches);
            }
            for a in &r.alias {
                subs.insert(a.clone(), sp.clone());
            }
            subs.insert(s.clone(), sp);
        }
        p.sub = Some(subs);
    }
    Ok(p)
}

/// Reads a table from its text.
pub(super) fn table(text: &str) -> Result<Table, String> {
    let raw: RawTable = toml::from_str(text).map_err(|e| e.to_string())?;
    let mut programs = HashMap::new();
    let mut aliases = HashMap::new();
    let mut found = Vec::new();
    let mut wrappers = HashMap::new();
    for (name, r) in &raw.wrapper {
        let w = wrapper(name, r)?;
        examples(&format!("wrapper.{name}"), &r.examples, &mut found)?;
        for a in &r.alias {
            wrappers.insert(a.clone(), w.clone());
        }
        wrappers.insert(name.clone(), w);
    }
    let mut runners = HashMap::new();
    for (name, r) in &raw.runner {
        if !r.not_plain.is_empty() || r.positionals > 0 || r.adds.is_some() || !r.alias.is_empty() {
            return Err(format!("runner.{name}: a runner has only `options` and `examples`"));
        }
        runners.insert(name.clone(), wrapper(name, r)?.opts);
        examples(&format!("runner.{name}"), &r.examples, &mut found)?;
    }
    for (name, r) in &raw.program {
        let p = program(name, r, None)?;
        examples(&format!("program.{name}"), &r.examples, &mut found)?;
        for (s, sr) in &r.sub {
            examples(&format!("program.{name}.sub.{s}"), &sr.examples, &mut found)?;
        }
        for a in &r.alias {
            programs.insert(a.clone(), p.clone());
            aliases.insert(a.clone(), name.clone());
        }
        programs.insert(name.clone(), p);
    }
    let e = &raw.environment;
    Ok(Table {
        version: raw.version,
        programs,
        aliases,
        build_and_test: raw.build_and_test.clone(),
        registries: reaches("registries", &raw.registries)?,
        changes_programs: Names::of(&e.changes_programs, &e.changes_programs_prefixes),
        harmless: Names::of(&e.harmless, &e.harmless_prefixes),
        wrappers,
        runners,
        shells: Names::of(&raw.shells, ""),
        package_runners: Names::of(&raw.package_runners, ""),
        package_managers: Names::of(&raw.package_managers, ""),
        examples: found,
    })
}

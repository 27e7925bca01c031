//! A command given as words, run: wrappers (`sudo`, `env`, `timeout`, ...) and runners of other
//! commands (`bash -c`, `eval`, `xargs`, `find -exec`, `npx`, `watch`, `trap`) seen through, the
//! rest read against the program table.

use super::opts::Spec;
use super::wrappers::wrapper;
use super::{Walker, identity};
use crate::classify::classify;
use crate::effects::Effects;
use crate::table::table;
use crate::word::Word;
use crate::{Command, PathArg};

/// Whether a program is a POSIX-like shell (its `-c` runs a script).
pub fn is_shell(name: &str) -> bool {
    matches!(name, "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash" | "busybox" | "rbash")
}

impl Walker<'_> {
    /// Runs a command given as words, seeing through wrappers and runners.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run(
        &mut self,
        words: Vec<Word>,
        env: Vec<String>,
        reads: Vec<Word>,
        mut via: Vec<String>,
        mut adds: Effects,
        depth: usize,
        stdin: Option<Option<String>>,
        inner: bool,
    ) {
        if via.len() > 16 {
            self.opaque("too many wrappers");
            return;
        }
        for name in &env {
            if table().harmless_env(name) {
            } else if table().changes_programs(name) {
                adds |= Effects::EXEC | Effects::ENV;
                self.opaque(format!("`{name}` is set for the command, which changes what it runs"));
            } else {
                adds |= Effects::ENV;
            }
        }
        let Some(first) = words.first() else { return };
        let name = match first {
            Word::Lit(p) if !p.is_empty() => identity(p),
            other => {
                self.opaque(format!("the program `{}` is known only when the line runs", other.text()));
                self.push(Command {
                    program: None,
                    words: words.iter().map(|w| w.lit().map(str::to_string)).collect(),
                    named: 0,
                    effects: Effects::UNKNOWN | Effects::EXEC | adds,
                    reads: Vec::new(),
                    writes: Vec::new(),
                    via,
                    inner,
                    known: false,
                });
                return;
            }
        };
        let args = &words[1..];
        // Wrappers: the command after their options.
        if let Some(w) = wrapper(&name) {
            let Some(read) = self.options(&name, &w.opts, args) else {
                return self.push_opaque(&name, args, via, adds, inner);
            };
            if read.found.iter().any(|(o, _)| w.not_plain.contains(o)) {
                // A look-up, a list, an editor or a shell: not a plain wrapper.
                adds |= Effects::UNKNOWN;
            }
            let mut i = read.end;
            let mut positional = 0;
            while positional < w.positionals {
                match args.get(i).map(Word::lit) {
                    Some(Some(_)) => {
                        positional += 1;
                        i += 1;
                    }
                    Some(None) => {
                        // A positional or the program, known only when it runs.
                        self.opaque(format!("`{}` runs a command known only when the line runs", name));
                        i += 1;
                        break;
                    }
                    None => break,
                }
            }
            via.push(name.clone());
            let rest: Vec<Word> = args.get(i..).map(<[Word]>::to_vec).unwrap_or_default();
            if rest.is_empty() {
                if name == "sudo" && adds.any(Effects::UNKNOWN) {
                    self.opaque("`sudo` with a shell or an editor");
                }
                self.push_classified(&name, args, adds | w.adds, reads, via, inner);
                return;
            }
            return self.run(rest, Vec::new(), reads, via, adds | w.adds, depth, stdin, inner);
        }
        match name.as_str() {
            "env" => return self.env(args, reads, via, adds, depth, stdin, inner),
            "eval" => {
                self.line.complex = true;
                let mut text = Vec::new();
                // `eval -- rm x` evaluates `rm x`.
                let args = match args.first().and_then(Word::lit) {
                    Some("--") => &args[1..],
                    _ => args,
                };
                for a in args {
                    match a.lit() {
                        Some(s) => text.push(s.to_string()),
                        None => {
                            self.opaque("`eval` of text known only when the line runs");
                            return self.push_opaque(&name, args, via, adds, inner);
                        }
                    }
                }
                return self.script(&text.join(" "), depth + 1);
            }
            "source" | "." => {
                self.opaque(format!("`{name}` runs the commands of a file"));
                return self.push_opaque(&name, args, via, adds, inner);
            }
            "trap" => {
                self.line.complex = true;
                const TRAP: Spec = Spec { flags: &["-l", "-p", "-P"], values: &[], optional: &[], numeric: false };
                match TRAP.read(args) {
                    // A list of signals or of traps set: it runs nothing.
                    Ok(r) if !r.found.is_empty() => {}
                    Ok(r) => match args.get(r.end).map(Word::lit) {
                        Some(Some("-")) | None => {}
                        Some(Some(t)) => self.script(t, depth + 1),
                        Some(None) => self.opaque("`trap` with commands known only when the line runs"),
                    },
                    Err(why) => self.opaque(format!("`trap` with {why}, which Assent does not know")),
                }
                return self.push_classified(&name, &[], adds, reads, via, inner);
            }
            "watch" => {
                let mut i = 0;
                while let Some(s) = args.get(i).and_then(Word::lit) {
                    if !s.starts_with('-') {
                        break;
                    }
                    i += if matches!(s, "-n" | "--interval" | "-d" | "--differences" | "-g" | "-q" | "--chgexit")
                        && !matches!(s, "-d" | "--differences" | "-g" | "--chgexit")
                    {
                        2
                    } else {
                        1
                    };
                }
                let rest: Vec<String> =
                    args.get(i..).unwrap_or(&[]).iter().filter_map(|w| w.lit().map(str::to_string)).collect();
                if rest.len() != args.len().saturating_sub(i) {
                    self.opaque("`watch` of a command known only when the line runs");
                }
                self.line.complex = true;
                return self.script(&rest.join(" "), depth + 1);
            }
            "xargs" => return self.xargs(args, reads, via, adds, depth, inner),
            "cd" | "pushd" | "popd" => {
                let target = args.iter().find(|a| !a.lit().is_some_and(|s| s.starts_with('-')));
                let next = match (name.as_str(), target) {
                    ("popd", _) => None,
                    (_, None) => self.ctx.home.clone(),
                    (_, Some(t)) => match self.path_of(t) {
                        PathArg::At(p) => Some(p),
                        _ => None,
                    },
                };
                let reads: Vec<Word> = target.cloned().into_iter().collect();
                self.push_classified(&name, &[], adds, reads, via, inner);
                self.cwd = next;
                return;
            }
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                for a in args {
                    let text = a.text();
                    let var = text.split_once('=').map_or(text, |(n, _)| n);
                    if table().changes_programs(var) {
                        self.opaque(format!("`{var}` is set, which changes what later commands run"));
                    }
                    if matches!(text, "-f" | "-F") && name != "local" {
                        // `export -f`: a function other shells will run.
                        adds |= Effects::EXEC;
                    }
                }
                return self.push_classified(&name, &[], adds, reads, via, inner);
            }
            "shopt" | "set" | "enable" | "alias" | "unalias" | "hash" => {
                if args.iter().any(|a| {
                    a.lit().is_none_or(|s| {
                        s.contains("expand_aliases")
                            || s.contains("-f") && name == "enable"
                            || name == "hash" && s == "-p"
                    })
                }) {
                    self.opaque(format!("`{name}` changes what later words run"));
                }
                return self.push_classified(&name, args, adds, reads, via, inner);
            }
            _ => {}
        }
        if is_shell(&name) {
            return self.shell(&name, args, reads, via, adds, depth, stdin, inner);
        }
        if matches!(name.as_str(), "npx" | "pnpx" | "bunx") || is_npm_exec(&name, args) {
            // `npx -c 'script'` runs a shell script: read like `bash -c`, never covered by an
            // allow of the runner.
            let mut k = 0;
            while let Some(a) = args.get(k) {
                let script = match a.lit() {
                    Some("-c" | "--call") => Some(args.get(k + 1).map(Word::lit)),
                    Some(s) if s.starts_with("--call=") => Some(Some(s.strip_prefix("--call="))),
                    Some(s) if s.starts_with("-c") && s.len() > 2 && !s.starts_with("--") => Some(Some(Some(&s[2..]))),
                    _ => None,
                };
                match script {
                    Some(Some(Some(text))) => {
                        self.line.complex = true;
                        let text = text.to_string();
                        self.script(&text, depth + 1);
                    }
                    Some(_) => self.opaque(format!("`{name} -c` with a script known only when the line runs")),
                    None => {}
                }
                k += 1;
            }
            // The package it runs is a command too: deny and ask rules see it.
            let start = inner_start(&name, args);
            if let Some(rest) = start.and_then(|s| args.get(s..)).filter(|r| !r.is_empty()) {
                let saved = self.line.commands.len();
                // Through `via` (the wrappers so far and this one), so a chain of runners is
                // bounded like a chain of wrappers.
                let mut through = via.clone();
                through.push(name.clone());
                self.run(rest.to_vec(), Vec::new(), Vec::new(), through, adds, depth, None, true);
                for c in &mut self.line.commands[saved..] {
                    c.inner = true;
                }
            }
        }
        self.push_classified(&name, args, adds, reads, via, inner);
    }

    pub(super) fn push_opaque(&mut self, name: &str, args: &[Word], via: Vec<String>, adds: Effects, inner: bool) {
        let mut words = vec![Some(name.to_string())];
        words.extend(args.iter().map(|w| w.lit().map(str::to_string)));
        self.push(Command {
            program: Some(name.to_string()),
            words,
            named: 1,
            effects: Effects::UNKNOWN | Effects::EXEC | adds,
            reads: Vec::new(),
            writes: Vec::new(),
            via,
            inner,
            known: false,
        });
    }

    pub(super) fn push_classified(
        &mut self,
        name: &str,
        args: &[Word],
        adds: Effects,
        reads: Vec<Word>,
        via: Vec<String>,
        inner: bool,
    ) {
        let c = classify(table(), name, args);
        let mut all_reads: Vec<PathArg> = reads.iter().map(|w| self.path_of(w)).collect();
        all_reads.extend(c.reads.iter().map(|w| self.path_of(w)));
        let writes = c.writes.iter().map(|w| self.path_of(w)).collect();
        for r in &c.runs {
            // `find -exec`: `{}` is each file found, anywhere below the paths searched.
            let cmd: Vec<Word> = r
                .iter()
                .map(|w| {
                    if w.lit().is_some_and(|s| s.contains("{}")) {
                        Word::Unknown(w.text().to_string())
                    } else {
                        w.clone()
                    }
                })
                .collect();
            let saved = self.cwd.clone();
            let mut through = via.clone();
            through.push(name.to_string());
            self.run(cmd, Vec::new(), Vec::new(), through, Effects::NONE, 0, None, false);
            self.cwd = saved;
        }
        self.push(Command {
            program: Some(name.to_string()),
            words: c.canonical,
            named: c.named,
            effects: c.effects | adds,
            reads: all_reads,
            writes,
            via,
            inner,
            known: c.known,
        });
    }

    /// The options of `name` at the start of `args`, read by `spec`; none (the line made
    /// opaque, saying why) when an option is one it does not know.
    fn options(&mut self, name: &str, spec: &Spec, args: &[Word]) -> Option<super::opts::Read> {
        match spec.read(args) {
            Ok(r) => Some(r),
            Err(why) => {
                self.opaque(format!("`{name}` with {why}, which Assent does not know"));
                None
            }
        }
    }

    pub(super) fn push(&mut self, c: Command) {
        if self.line.commands.len() >= 512 {
            self.opaque("more than 512 commands");
            return;
        }
        self.line.commands.push(c);
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn env(
        &mut self,
        args: &[Word],
        reads: Vec<Word>,
        mut via: Vec<String>,
        mut adds: Effects,
        depth: usize,
        stdin: Option<Option<String>>,
        inner: bool,
    ) {
        const ENV: Spec = Spec {
            flags: &["-i", "--ignore-environment", "-0", "--null", "-v", "--debug"],
            values: &["-u", "--unset", "-C", "--chdir", "-S", "--split-string", "-a", "--argv0"],
            optional: &["--block-signal", "--default-signal", "--ignore-signal", "--list-signal-handling"],
            numeric: false,
        };
        let Some(read) = self.options("env", &ENV, args) else {
            return self.push_opaque("env", args, via, adds, inner);
        };
        for (o, _) in &read.found {
            match *o {
                "-S" | "--split-string" => {
                    self.opaque("`env -S` splits a string into a command");
                    return self.push_opaque("env", args, via, adds, inner);
                }
                "-C" | "--chdir" => adds |= Effects::RELOCATE,
                "-a" | "--argv0" => adds |= Effects::UNKNOWN,
                _ => {}
            }
        }
        let mut i = read.end;
        let mut env = Vec::new();
        while let Some(a) = args.get(i) {
            let Some(s) = a.lit() else {
                self.opaque("`env` with words known only when the line runs");
                return self.push_opaque("env", args, via, adds, inner);
            };
            match s.split_once('=') {
                Some((n, _)) if !n.is_empty() => {
                    env.push(n.to_string());
                    i += 1;
                }
                _ => break,
            }
        }
        via.push("env".into());
        let rest: Vec<Word> = args.get(i..).map(<[Word]>::to_vec).unwrap_or_default();
        if rest.is_empty() {
            return self.push_classified("printenv", &[], adds, reads, via, inner);
        }
        // A command run through `env` runs with an environment it may have changed (`-i`,
        // `-u`): never the same kind as the command alone.
        self.run(rest, env, reads, via, adds | Effects::ENV, depth, stdin, inner)
    }

    pub(super) fn xargs(
        &mut self,
        args: &[Word],
        reads: Vec<Word>,
        mut via: Vec<String>,
        adds: Effects,
        depth: usize,
        inner: bool,
    ) {
        const XARGS: Spec = Spec {
            flags: &[
                "-0",
                "--null",
                "-r",
                "--no-run-if-empty",
                "-t",
                "--verbose",
                "-p",
                "--interactive",
                "-x",
                "--exit",
                "-o",
                "--open-tty",
                "--show-limits",
            ],
            values: &[
                "-n",
                "--max-args",
                "-L",
                "-I",
                "-d",
                "--delimiter",
                "-P",
                "--max-procs",
                "-s",
                "--max-chars",
                "-a",
                "--arg-file",
                "-E",
                "--process-slot-var",
            ],
            optional: &["-e", "--eof", "-i", "--replace", "-l", "--max-lines"],
            numeric: false,
        };
        let Some(read) = self.options("xargs", &XARGS, args) else {
            return self.push_opaque("xargs", args, via, adds, inner);
        };
        let mut extra_reads = reads;
        for (o, v) in &read.found {
            if matches!(*o, "-a" | "--arg-file") {
                match v {
                    Some(Some(f)) => extra_reads.push(Word::Lit(f.clone())),
                    _ => extra_reads.push(Word::Unknown("…".into())),
                }
            }
        }
        let i = read.end;
        via.push("xargs".into());
        let mut rest: Vec<Word> = args.get(i..).map(<[Word]>::to_vec).unwrap_or_default();
        if rest.is_empty() {
            rest.push(Word::Lit("echo".into()));
        }
        // The words it reads from its input are more arguments, unknown.
        rest.push(Word::Unknown("…".into()));
        self.line.chained = true;
        self.run(rest, Vec::new(), extra_reads, via, adds, depth, None, inner)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn shell(
        &mut self,
        name: &str,
        args: &[Word],
        reads: Vec<Word>,
        via: Vec<String>,
        adds: Effects,
        depth: usize,
        stdin: Option<Option<String>>,
        inner: bool,
    ) {
        let mut i = 0;
        let mut script_from_c = false;
        while let Some(a) = args.get(i) {
            let Some(s) = a.lit() else {
                self.opaque(format!("`{name}` with words known only when the line runs"));
                return self.push_opaque(name, args, via, adds, inner);
            };
            if s == "--" {
                i += 1;
                break;
            }
            if s.starts_with("--") {
                i += 1;
                continue;
            }
            if (s.starts_with('-') || s.starts_with('+')) && s.len() > 1 {
                i += 1;
                if s.contains('c') && s.starts_with('-') {
                    script_from_c = true;
                }
                if s.contains('o') || s.contains('O') {
                    // `-o name`, `-O shopt`.
                    i += 1;
                }
                continue;
            }
            break;
        }
        let mut via = via;
        via.push(name.to_string());
        if script_from_c {
            match args.get(i) {
                Some(Word::Lit(text)) => {
                    self.line.complex = true;
                    let saved = self.cwd.clone();
                    let first = self.line.commands.len();
                    self.script(text, depth + 1);
                    self.cwd = saved;
                    // What wraps the shell applies to what it runs.
                    for c in self.line.commands.iter_mut().skip(first) {
                        c.effects |= adds;
                        let mut v = via.clone();
                        v.append(&mut c.via);
                        c.via = v;
                    }
                }
                _ => {
                    self.opaque(format!("`{name} -c` with a script known only when the line runs"));
                    self.push_opaque(name, args, via, adds, inner);
                }
            }
            return;
        }
        match (args.get(i), stdin) {
            (None, Some(Some(text))) => {
                self.line.complex = true;
                self.script(&text, depth + 1);
            }
            (None, _) => {
                self.opaque(format!("`{name}` runs commands from its input"));
                self.push_opaque(name, args, via, adds, inner);
            }
            (Some(_), _) => {
                self.opaque(format!("`{name}` runs the commands of a file"));
                let _ = reads;
                self.push_opaque(name, args, via, adds, inner);
            }
        }
    }
}

fn is_npm_exec(name: &str, args: &[Word]) -> bool {
    matches!(name, "npm" | "pnpm" | "yarn" | "bun")
        && args
            .iter()
            .find(|a| !a.lit().is_some_and(|s| s.starts_with('-')))
            .and_then(Word::lit)
            .is_some_and(|s| matches!(s, "exec" | "x" | "dlx"))
}

/// Where the command a package runner runs starts in its words.
fn inner_start(name: &str, args: &[Word]) -> Option<usize> {
    let mut i = 0;
    if !matches!(name, "npx" | "pnpx" | "bunx") {
        // Past `exec` / `dlx`.
        i = args.iter().position(|a| a.lit().is_some_and(|s| matches!(s, "exec" | "x" | "dlx")))? + 1;
    }
    while let Some(a) = args.get(i) {
        match a.lit() {
            Some("--") => return Some(i + 1),
            Some(s) if s.starts_with('-') => i += if matches!(s, "-p" | "--package" | "-c" | "--call") { 2 } else { 1 },
            _ => return Some(i),
        }
    }
    None
}

//! A command given as words, run: wrappers (`sudo`, `env`, `timeout`, ...) and runners of other
//! commands (`bash -c`, `eval`, `xargs`, `find -exec`, `npx`, `watch`, `trap`) seen through, the
//! rest read against the program table. What the table knows of wrappers, runners and shells is
//! its data (`[wrapper.NAME]`, `[runner.NAME]`, `shells`); what each runner does with its words
//! is here and in `runners.rs`.

use super::{Walker, identity};
use crate::classify::classify;
use crate::effects::Effects;
use crate::opts::{Read, Spec};
use crate::table::table;
use crate::word::Word;
use crate::{Command, PathArg};

/// Whether a program is a POSIX-like shell (its `-c` runs a script), by the embedded table.
pub fn is_shell(name: &str) -> bool {
    table().is_shell(name)
}

/// What a command is run through: the wrappers and runners around it so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct Through {
    /// Paths read on its behalf (a redirection's input, `xargs -a FILE`).
    pub(crate) reads: Vec<Word>,
    /// The wrappers and runners it runs through, outermost first.
    pub(crate) via: Vec<String>,
    /// What they add to what it does.
    pub(crate) adds: Effects,
    /// How deep in runners of scripts it is (`bash -c "bash -c '…'"`).
    pub(crate) depth: usize,
    /// The text its input gives it (a here-document; inner none: known only as it runs).
    pub(crate) stdin: Option<Option<String>>,
    /// Run by another command (`npx`'s package): deny and ask rules see it, an allow of the
    /// runner covers it.
    pub(crate) inner: bool,
}

impl Through {
    /// The same, one level further through `name`.
    pub(super) fn and(&self, name: &str) -> Through {
        let mut t = self.clone();
        t.via.push(name.to_string());
        t
    }
}

impl Walker<'_> {
    /// Runs a command given as words, with `env` names assigned for it, seeing through
    /// wrappers and runners.
    pub(crate) fn run(&mut self, words: Vec<Word>, env: Vec<String>, mut t: Through) {
        if t.via.len() > 16 {
            self.opaque("too many wrappers");
            return;
        }
        for name in &env {
            if self.table.harmless_env(name) {
            } else if self.table.changes_programs(name) {
                t.adds |= Effects::EXEC | Effects::ENV;
                self.opaque(format!("`{name}` is set for the command, which changes what it runs"));
            } else {
                t.adds |= Effects::ENV;
            }
        }
        let Some(first) = words.first() else { return };
        let name = match first {
            Word::Lit(p) if !p.is_empty() => identity(p),
            other => {
                self.opaque(format!("the program `{}` is known only when the line runs", other.text()));
                let words = words.iter().map(|w| w.lit().map(str::to_string)).collect();
                return self.push_unknown(None, words, t);
            }
        };
        let args = &words[1..];
        if self.table.wrapper(&name).is_some() {
            return self.wrapped(&name, args, t);
        }
        let t = match self.runner(&name, args, t) {
            Ok(()) => return,
            Err(t) => t,
        };
        if self.table.is_shell(&name) {
            return self.shell(&name, args, t);
        }
        if self.table.is_package_runner(&name) || self.is_package_exec(&name, args) {
            self.package(&name, args, &t);
        }
        self.push_classified(&name, args, t);
    }

    /// A wrapper: the command after its options, with what the wrapper adds.
    fn wrapped(&mut self, name: &str, args: &[Word], mut t: Through) {
        let table = self.table;
        let Some(w) = table.wrapper(name) else { return };
        let Some(read) = self.options(name, &w.opts, args) else {
            return self.push_opaque(name, args, t);
        };
        if read.found.iter().any(|(o, _)| w.not_plain.iter().any(|n| n == o)) {
            // A look-up, a list, an editor or a shell: not a plain wrapper.
            t.adds |= Effects::UNKNOWN;
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
                    self.opaque(format!("`{name}` runs a command known only when the line runs"));
                    i += 1;
                    break;
                }
                None => break,
            }
        }
        let mut t = t.and(name);
        let rest: Vec<Word> = args.get(i..).map(<[Word]>::to_vec).unwrap_or_default();
        if rest.is_empty() {
            if name == "sudo" && t.adds.any(Effects::UNKNOWN) {
                self.opaque("`sudo` with a shell or an editor");
            }
            t.adds |= w.adds;
            return self.push_classified(name, args, t);
        }
        t.adds |= w.adds;
        self.run(rest, Vec::new(), t)
    }

    /// The runners and builtins that change how later words are read, filed; `t` handed back
    /// when `name` is none of them.
    fn runner(&mut self, name: &str, args: &[Word], t: Through) -> Result<(), Through> {
        match name {
            "env" => self.env(args, t),
            "eval" => self.eval(args, t),
            "source" | "." => {
                self.opaque_file(format!("`{name}` runs the commands of a file"));
                self.push_opaque(name, args, t);
            }
            "trap" => self.trap(args, t),
            "watch" => self.watch(args, t.depth),
            "xargs" => self.xargs(args, t),
            "cd" | "pushd" | "popd" => self.cd(name, args, t),
            "export" | "declare" | "typeset" | "local" | "readonly" => self.declare(name, args, t),
            "shopt" | "set" | "enable" | "alias" | "unalias" | "hash" => {
                let changes = |s: &str| {
                    s.contains("expand_aliases") || s.contains("-f") && name == "enable" || name == "hash" && s == "-p"
                };
                if args.iter().any(|a| a.lit().is_none_or(changes)) {
                    self.opaque(format!("`{name}` changes what later words run"));
                }
                self.push_classified(name, args, t);
            }
            _ => return Err(t),
        }
        Ok(())
    }

    /// `cd`: the folder later relative paths resolve against.
    fn cd(&mut self, name: &str, args: &[Word], mut t: Through) {
        let target = args.iter().find(|a| !a.lit().is_some_and(|s| s.starts_with('-')));
        let next = match (name, target) {
            ("popd", _) => None,
            (_, None) => self.ctx.home.clone(),
            (_, Some(w)) => match self.path_of(w) {
                PathArg::At(p) => Some(p),
                _ => None,
            },
        };
        t.reads = target.cloned().into_iter().collect();
        self.push_classified(name, &[], t);
        self.cwd = next;
    }

    /// `export` and its kin: a name that changes what later commands run makes the line opaque.
    fn declare(&mut self, name: &str, args: &[Word], mut t: Through) {
        for a in args {
            let text = a.text();
            let var = text.split_once('=').map_or(text, |(n, _)| n);
            if self.table.changes_programs(var) {
                self.opaque(format!("`{var}` is set, which changes what later commands run"));
            }
            if matches!(text, "-f" | "-F") && name != "local" {
                // `export -f`: a function other shells will run.
                t.adds |= Effects::EXEC;
            }
        }
        self.push_classified(name, &[], t);
    }

    pub(super) fn push_opaque(&mut self, name: &str, args: &[Word], t: Through) {
        let mut words = vec![Some(name.to_string())];
        words.extend(args.iter().map(|w| w.lit().map(str::to_string)));
        self.push_unknown(Some(name), words, t);
    }

    /// A command that may do anything: its program (`None`: known only when the line runs) and
    /// its words, as far as they are known.
    fn push_unknown(&mut self, program: Option<&str>, words: Vec<Option<String>>, t: Through) {
        self.push(Command {
            program: program.map(str::to_string),
            words,
            named: usize::from(program.is_some()),
            effects: Effects::UNKNOWN | Effects::EXEC | t.adds,
            reads: Vec::new(),
            writes: Vec::new(),
            via: t.via,
            inner: t.inner,
            known: false,
            reaches: Vec::new(),
        });
    }

    pub(super) fn push_classified(&mut self, name: &str, args: &[Word], t: Through) {
        let c = classify(self.table, name, args);
        let mut all_reads: Vec<PathArg> = t.reads.iter().map(|w| self.path_of(w)).collect();
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
            let through = Through { via: t.and(name).via, ..Through::default() };
            self.run(cmd, Vec::new(), through);
            self.cwd = saved;
        }
        // The hosts its entry names, when nothing in its words or wrappers added the network.
        let widened = Effects::NETWORK | Effects::UNKNOWN | Effects::EXEC | Effects::RELOCATE | Effects::ENV;
        let reaches = if c.known && !c.raised.any(widened) && !t.adds.any(widened) { c.reaches } else { Vec::new() };
        self.push(Command {
            program: Some(name.to_string()),
            words: c.canonical,
            named: c.named,
            effects: c.effects | t.adds,
            reads: all_reads,
            writes,
            via: t.via,
            inner: t.inner,
            known: c.known,
            reaches,
        });
    }

    /// The options of `name` at the start of `args`, read by `spec`; none (the line made
    /// opaque, saying why) when an option is one it does not know.
    pub(super) fn options<'s>(&mut self, name: &str, spec: &'s Spec, args: &[Word]) -> Option<Read<'s>> {
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
}

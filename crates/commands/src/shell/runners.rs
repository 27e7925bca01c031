//! Runners: commands that run other commands in their own way. `env` (assignments, then the
//! command), `xargs` (the command with more arguments from its input), `eval`, `trap` and
//! `watch` (a script in their words), shells (a script after `-c`, or from their input) and
//! package runners (`npx`, `npm exec`). Their options are the table's (`[runner.NAME]`).

use super::Walker;
use super::run::Through;
use crate::effects::Effects;
use crate::word::Word;

impl Walker<'_> {
    pub(super) fn env(&mut self, args: &[Word], mut t: Through) {
        let table = self.table;
        let Some(read) = self.options("env", table.runner("env"), args) else {
            return self.push_opaque("env", args, t);
        };
        for (o, _) in &read.found {
            match *o {
                "-S" | "--split-string" => {
                    self.opaque("`env -S` splits a string into a command");
                    return self.push_opaque("env", args, t);
                }
                "-C" | "--chdir" => t.adds |= Effects::RELOCATE,
                "-a" | "--argv0" => t.adds |= Effects::UNKNOWN,
                _ => {}
            }
        }
        let mut i = read.end;
        let mut env = Vec::new();
        while let Some(a) = args.get(i) {
            let Some(s) = a.lit() else {
                self.opaque("`env` with words known only when the line runs");
                return self.push_opaque("env", args, t);
            };
            match s.split_once('=') {
                Some((n, _)) if !n.is_empty() => {
                    env.push(n.to_string());
                    i += 1;
                }
                _ => break,
            }
        }
        let mut t = t.and("env");
        let rest: Vec<Word> = args.get(i..).map(<[Word]>::to_vec).unwrap_or_default();
        if rest.is_empty() {
            return self.push_classified("printenv", &[], t);
        }
        // A command run through `env` runs with an environment it may have changed (`-i`,
        // `-u`): never the same kind as the command alone.
        t.adds |= Effects::ENV;
        self.run(rest, env, t)
    }

    pub(super) fn xargs(&mut self, args: &[Word], t: Through) {
        let table = self.table;
        let Some(read) = self.options("xargs", table.runner("xargs"), args) else {
            return self.push_opaque("xargs", args, t);
        };
        let mut t = t.and("xargs");
        for (o, v) in &read.found {
            if matches!(*o, "-a" | "--arg-file") {
                match v {
                    Some(Some(f)) => t.reads.push(Word::Lit(f.clone())),
                    _ => t.reads.push(Word::Unknown("…".into())),
                }
            }
        }
        let mut rest: Vec<Word> = args.get(read.end..).map(<[Word]>::to_vec).unwrap_or_default();
        if rest.is_empty() {
            rest.push(Word::Lit("echo".into()));
        }
        // The words it reads from its input are more arguments, unknown.
        rest.push(Word::Unknown("…".into()));
        self.line.chained = true;
        t.stdin = None;
        self.run(rest, Vec::new(), t)
    }

    pub(super) fn eval(&mut self, args: &[Word], t: Through) {
        self.line.complex = true;
        // `eval -- rm x` evaluates `rm x`.
        let args = match args.first().and_then(Word::lit) {
            Some("--") => &args[1..],
            _ => args,
        };
        let mut text = Vec::new();
        for a in args {
            match a.lit() {
                Some(s) => text.push(s.to_string()),
                None => {
                    self.opaque("`eval` of text known only when the line runs");
                    return self.push_opaque("eval", args, t);
                }
            }
        }
        self.script(&text.join(" "), t.depth + 1);
    }

    pub(super) fn trap(&mut self, args: &[Word], t: Through) {
        self.line.complex = true;
        match self.table.runner("trap").read(args) {
            // A list of signals or of traps set: it runs nothing.
            Ok(r) if !r.found.is_empty() => {}
            Ok(r) => match args.get(r.end).map(Word::lit) {
                Some(Some("-")) | None => {}
                Some(Some(text)) => self.script(text, t.depth + 1),
                Some(None) => self.opaque("`trap` with commands known only when the line runs"),
            },
            Err(why) => self.opaque(format!("`trap` with {why}, which Assent does not know")),
        }
        self.push_classified("trap", &[], t);
    }

    pub(super) fn watch(&mut self, args: &[Word], depth: usize) {
        let mut i = 0;
        while let Some(s) = args.get(i).and_then(Word::lit) {
            if !s.starts_with('-') {
                break;
            }
            // `-n`, `--interval` and `-q` (`--equexit`'s short form) take a value.
            i += if matches!(s, "-n" | "--interval" | "-q") { 2 } else { 1 };
        }
        let rest: Vec<String> =
            args.get(i..).unwrap_or(&[]).iter().filter_map(|w| w.lit().map(str::to_string)).collect();
        if rest.len() != args.len().saturating_sub(i) {
            self.opaque("`watch` of a command known only when the line runs");
        }
        self.line.complex = true;
        self.script(&rest.join(" "), depth + 1);
    }

    pub(super) fn shell(&mut self, name: &str, args: &[Word], t: Through) {
        let mut i = 0;
        let mut script_from_c = false;
        while let Some(a) = args.get(i) {
            let Some(s) = a.lit() else {
                self.opaque(format!("`{name}` with words known only when the line runs"));
                return self.push_opaque(name, args, t);
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
        let depth = t.depth;
        let stdin = t.stdin.clone();
        let t = t.and(name);
        if script_from_c {
            return self.shell_script(name, args, args.get(i), t);
        }
        match (args.get(i), stdin) {
            (None, Some(Some(text))) => {
                self.line.complex = true;
                self.script(&text, depth + 1);
            }
            (None, _) => {
                self.opaque(format!("`{name}` runs commands from its input"));
                self.push_opaque(name, args, t);
            }
            (Some(_), _) => {
                self.opaque_file(format!("`{name}` runs the commands of a file"));
                self.push_opaque(name, args, t);
            }
        }
    }

    /// `bash -c SCRIPT`: the script's commands, with what wraps the shell.
    fn shell_script(&mut self, name: &str, args: &[Word], script: Option<&Word>, t: Through) {
        let Some(Word::Lit(text)) = script else {
            self.opaque(format!("`{name} -c` with a script known only when the line runs"));
            return self.push_opaque(name, args, t);
        };
        self.line.complex = true;
        let saved = self.cwd.clone();
        let first = self.line.commands.len();
        self.script(text, t.depth + 1);
        self.cwd = saved;
        // What wraps the shell applies to what it runs.
        for c in self.line.commands.iter_mut().skip(first) {
            c.effects |= t.adds;
            let mut v = t.via.clone();
            v.append(&mut c.via);
            c.via = v;
        }
    }

    /// `npx PKG ...` or `npm exec PKG ...`: a `-c` script read like `bash -c` (never covered by
    /// an allow of the runner), and the package's command, which deny and ask rules see.
    pub(super) fn package(&mut self, name: &str, args: &[Word], t: &Through) {
        for (k, a) in args.iter().enumerate() {
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
                    self.script(&text, t.depth + 1);
                }
                Some(_) => self.opaque(format!("`{name} -c` with a script known only when the line runs")),
                None => {}
            }
        }
        let start = self.inner_start(name, args);
        if let Some(rest) = start.and_then(|s| args.get(s..)).filter(|r| !r.is_empty()) {
            let saved = self.line.commands.len();
            // Through `via` (the wrappers so far and this one), so a chain of runners is
            // bounded like a chain of wrappers.
            let through =
                Through { via: t.and(name).via, adds: t.adds, depth: t.depth, inner: true, ..Through::default() };
            self.run(rest.to_vec(), Vec::new(), through);
            for c in &mut self.line.commands[saved..] {
                c.inner = true;
            }
        }
    }

    /// Whether this is a package manager running a package's command (`npm exec`, `pnpm dlx`).
    pub(super) fn is_package_exec(&self, name: &str, args: &[Word]) -> bool {
        self.table.is_package_manager(name)
            && args
                .iter()
                .find(|a| !a.lit().is_some_and(|s| s.starts_with('-')))
                .and_then(Word::lit)
                .is_some_and(|s| matches!(s, "exec" | "x" | "dlx"))
    }

    /// Where the command a package runner runs starts in its words.
    fn inner_start(&self, name: &str, args: &[Word]) -> Option<usize> {
        let mut i = 0;
        if !self.table.is_package_runner(name) {
            // Past `exec` / `dlx`.
            i = args.iter().position(|a| a.lit().is_some_and(|s| matches!(s, "exec" | "x" | "dlx")))? + 1;
        }
        while let Some(a) = args.get(i) {
            match a.lit() {
                Some("--") => return Some(i + 1),
                Some(s) if s.starts_with('-') => {
                    i += if matches!(s, "-p" | "--package" | "-c" | "--call") { 2 } else { 1 }
                }
                _ => return Some(i),
            }
        }
        None
    }
}

//! The command model, table-driven: each quoting, redirection, wrapper, runner and compound
//! form; each option class of the table; prefix coverage for allow, matching for deny and ask;
//! the read-only check; the bounds. Every case names what an attacker who writes the agent's
//! text would try.

use super::*;

mod commands;
mod prefixes;
mod reads;

pub(super) fn ctx() -> Context {
    Context { cwd: Some("/w/proj".into()), home: Some("/home/u".into()) }
}

pub(super) fn line(l: &str) -> Line {
    analyze(l, &ctx())
}

pub(super) fn prefix(p: &str) -> Prefix {
    Prefix::parse(p).unwrap_or_else(|e| panic!("{p}: {}", e.0))
}

/// What a deny or ask rule with this prefix sees: it matches a command anywhere the line runs
/// it, and every opaque line.
pub(super) fn denied(p: &str, l: &str) -> bool {
    let pr = prefix(p);
    let ln = line(l);
    ln.is_opaque() || ln.commands.iter().any(|c| pr.matches(c))
}

/// What an allow rule with this prefix covers alone: every command of a simple line (plain
/// commands joined by `&&`, `||`, `;`, `|`), no redirection writing a file.
pub(super) fn allowed(p: &str, l: &str) -> bool {
    let pr = prefix(p);
    let ln = line(l);
    ln.is_simple()
        && ln.redirects.is_empty()
        && !ln.commands.is_empty()
        && ln.commands.iter().all(|c| c.inner || pr.covers(c))
}

pub(super) fn reads_only(l: &str) -> bool {
    line(l).only_reads_inside("/w/proj")
}

#[test]
fn the_table_reads_and_knows_the_programs_agents_run() {
    let t = table::Table::parse(table::SOURCE).unwrap_or_else(|e| panic!("{e}"));
    assert!(t.version >= 1);
    let must = [
        "git",
        "ls",
        "cat",
        "head",
        "tail",
        "wc",
        "grep",
        "rg",
        "find",
        "fd",
        "sed",
        "awk",
        "sort",
        "uniq",
        "diff",
        "jq",
        "npm",
        "pnpm",
        "yarn",
        "npx",
        "node",
        "python",
        "pytest",
        "cargo",
        "go",
        "make",
        "docker",
        "kubectl",
        "curl",
        "wget",
        "rm",
        "mv",
        "cp",
        "mkdir",
        "chmod",
        "chown",
        "tee",
        "tar",
        "ln",
        "touch",
        "echo",
        "pwd",
        "stat",
        "du",
        "tree",
        "file",
        "which",
        "date",
        "tsc",
        "eslint",
        "prettier",
        "pip",
        "uv",
        "rustc",
        "gh",
        "terraform",
        "ssh",
        "kill",
        "rmdir",
        "truncate",
    ];
    for m in must {
        assert!(t.get(m).is_some(), "the table knows {m}");
    }
    assert!(t.names().count() >= 150, "{}", t.names().count());
    let git = t.get("git").and_then(|g| g.sub.as_ref()).map_or(0, |s| s.len());
    assert!(git >= 40, "git subcommands: {git}");
}

#[test]
fn bounds() {
    // A 4 MiB line costs a length check.
    let huge = "git;".repeat(1_000_000);
    let t = std::time::Instant::now();
    let l = line(&huge);
    assert!(l.is_opaque());
    assert!(l.commands.is_empty());
    assert!(t.elapsed() < std::time::Duration::from_millis(50), "{:?}", t.elapsed());
    // Just under the length limit, many commands: bounded.
    let many = "ls;".repeat(MAX / 3);
    let t = std::time::Instant::now();
    let l = line(&many);
    assert!(l.commands.len() <= 512);
    assert!(t.elapsed() < std::time::Duration::from_secs(5), "{:?}", t.elapsed());
    // Deep nesting: opaque before the parser recurses.
    let deep = format!("{}ls{}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(line(&deep).is_opaque());
    let nested = format!("{}ls{}", "$(echo ".repeat(40), ")".repeat(40));
    let l = line(&nested);
    assert!(l.is_opaque(), "{:?}", l.opaque);
    let runners = (0..10).fold("rm x".to_string(), |acc, _| format!("bash -c {}", shell_quote(&acc)));
    assert!(line(&runners).is_opaque());
    assert!(denied("rm", &runners));
}

const MAX: usize = shell::MAX_LEN;

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[test]
fn no_input_panics() {
    // Odd inputs: each is read (opaque or not) without a panic.
    let odd = [
        "",
        " ",
        ";",
        "&&",
        "|",
        "((",
        "))",
        "{",
        "}",
        "$(",
        "`",
        "'",
        "\"",
        "\\",
        "<<",
        "<<EOF",
        "cat <<EOF\nx",
        "${",
        "${x",
        "$((",
        "$'\\",
        "$'\\x'",
        "$'\\u{'",
        "a\0b",
        "ls >",
        "ls > >",
        "for",
        "case",
        "[[",
        "]]",
        "function",
        "f()",
        "!",
        "! !",
        "time",
        "coproc",
        "select x in a; do b; done",
        "ls 2>&-",
        "ls >&-",
        "ls {a..z}",
        "ls @(a|b)",
        "echo \u{202e}x",
        "a=(1 2 3)",
        "declare -A m=([k]=v)",
        "((x++))",
        "for ((i=0;i<3;i++)); do ls; done",
        "[[ -f x && -d y ]]",
        "ls <<<",
        "echo $'\\c'",
    ];
    for o in odd {
        let _ = line(o);
        let _ = analyze_argv(&[o.to_string()], &ctx());
    }
}

/// No line, however nested, overflows the reader's stack: each is read on a thread with a
/// quarter of a tokio worker's stack, so a line that passes here has room to spare on a server.
/// (A stack overflow aborts the whole process; it cannot be caught.)
#[test]
fn no_nesting_overflows_the_stack() {
    let n = 3000;
    let mut lines = vec![
        format!("[[ {}x ]]", "! ".repeat(n)),
        format!("{}true", "npx ".repeat(n)),
        format!("echo {}1{}", "$[".repeat(2000), "]".repeat(2000)),
        format!("{}true", "! ".repeat(n)),
        format!("{}x{}", "(".repeat(n), ")".repeat(n)),
        format!("{}x;{}", "{ ".repeat(n), " }".repeat(n)),
        format!("echo {}x{}", "$(".repeat(n), ")".repeat(n)),
        format!("echo {}x{}", "\"$(".repeat(n), ")\"".repeat(n)),
        format!("echo $(({}1{}))", "(".repeat(n), ")".repeat(n)),
        format!("echo $(({}1))", "1+".repeat(n)),
        format!("echo $(({}1))", "-".repeat(n)),
        format!("echo $(({}1))", "!".repeat(n)),
        format!("echo {}x{}", "${a:-".repeat(n), "}".repeat(n)),
        format!("[[ {}x{} ]]", "( ".repeat(n), " )".repeat(n)),
        format!("[[ {}x ]]", "a && ".repeat(n)),
        format!("cat {}x{}", "<(".repeat(n), ")".repeat(n)),
        format!("{}true{}", "if true; then ".repeat(500), "; fi".repeat(500)),
        "a|".repeat(n) + "a",
        "a && ".repeat(n) + "a",
        "a; ".repeat(n) + "a",
        format!("sudo {}rm x", "env ".repeat(n)),
        format!("{}ls", "timeout 1 ".repeat(n)),
        format!("{}ls", "bash -c ".repeat(n)),
        format!("echo {}", "`".repeat(n)),
        format!("x={}1{}", "$(".repeat(n), ")".repeat(n)),
        format!("a=({}1{})", "(".repeat(n), ")".repeat(n)),
        format!("echo {}", "\\$\\(".repeat(n)),
        format!("case x in {} esac", "x) ;; ".repeat(n)),
    ];
    lines.push(format!("f() {{ {} }}", "g() { ".repeat(n)));
    for l in lines {
        let start = l.chars().take(24).collect::<String>();
        let t = std::time::Instant::now();
        let read = std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(move || {
                let l = analyze(&l, &ctx());
                (l.is_opaque(), l.commands.len())
            })
            .unwrap_or_else(|e| panic!("{e}"))
            .join();
        assert!(read.is_ok(), "{start:?}…");
        assert!(t.elapsed() < std::time::Duration::from_secs(2), "{start:?}… took {:?}", t.elapsed());
    }
}

#[test]
fn every_example_of_the_table_holds_and_a_wrong_one_is_caught() {
    let t = table::Table::parse(table::SOURCE).unwrap_or_else(|e| panic!("{e}"));
    assert!(t.examples.len() >= 150, "{} examples", t.examples.len());
    if let Err(e) = check_examples(&t) {
        panic!("{}", e.replace("; ", "\n"));
    }
    // An example that does not hold makes the table unusable: every command is then asked.
    let wrong = table::SOURCE.replacen("examples.reads = [\"nice ls\"", "examples.reads = [\"nice rm x\"", 1);
    assert_ne!(wrong, table::SOURCE);
    let t = table::Table::parse(&wrong).unwrap_or_else(|e| panic!("{e}"));
    let e = check_examples(&t).expect_err("a wrong example");
    assert!(e.contains("wrapper.nice: `nice rm x`"), "{e}");
    assert_eq!(checked(Ok(t)).version, 0, "a table whose examples do not hold is none");
}

/// The programs of a table's source that carry no example, in their entry or a subcommand's.
fn programs_without_examples(source: &str) -> Vec<String> {
    let t = table::Table::parse(source).unwrap_or_else(|e| panic!("{e}"));
    let doc: toml::Table = toml::from_str(source).unwrap_or_else(|e| panic!("{e}"));
    let programs = doc.get("program").and_then(toml::Value::as_table).cloned().unwrap_or_default();
    programs
        .keys()
        .filter(|name| {
            let entry = format!("program.{name}");
            !t.examples.iter().any(|ex| ex.entry == entry || ex.entry.starts_with(&format!("{entry}.")))
        })
        .cloned()
        .collect()
}

#[test]
fn every_program_carries_an_example_and_one_without_is_caught() {
    // Each entry says by a line the table checks what it makes of the program (ARCHITECTURE.md).
    assert_eq!(programs_without_examples(table::SOURCE), Vec::<String>::new());
    let planted = table::SOURCE.replacen("examples.effects = { 'kill 1234' = \"delete\" }\n", "", 1);
    assert_ne!(planted, table::SOURCE, "the planted table lost kill's example");
    assert_eq!(programs_without_examples(&planted), vec!["kill".to_string()]);
}

#[test]
fn a_line_without_paths_names_none_it_knows() {
    let line = line("cat /etc/passwd src/*.rs notes > /tmp/out");
    assert!(line.commands[0].reads.iter().any(|p| matches!(p, PathArg::At(_))), "{line:?}");
    let line = line.without_paths();
    assert!(line.commands[0].reads.iter().all(|p| matches!(p, PathArg::Unknown(_))), "{line:?}");
    assert!(matches!(line.redirects[0].path, PathArg::Unknown(_)), "{line:?}");
}

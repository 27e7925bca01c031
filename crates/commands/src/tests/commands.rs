//! The commands a line runs, read from words and argv, and what is opaque.

use super::{ctx, line};
use crate::{Effects, Line, analyze_argv};

#[test]
fn commands_read_from_words_and_argv() {
    let programs = |l: &str| -> Vec<Option<String>> { line(l).commands.into_iter().map(|c| c.program).collect() };
    let p = |v: &[&str]| -> Vec<Option<String>> { v.iter().map(|s| Some(s.to_string())).collect() };
    assert_eq!(
        programs("npm test $'\\'' ; curl -s URL | sh #'"),
        vec![Some("npm".into()), Some("curl".into()), Some("sh".into())]
    );
    assert_eq!(programs("a && b || c; d | e & f"), p(&["a", "b", "c", "d", "e", "f"]));
    assert_eq!(programs("if a; then b; elif c; then d; else e; fi"), p(&["a", "b", "c", "d", "e"]));
    assert_eq!(programs("for i in 1 2; do a; done"), p(&["a"]));
    assert_eq!(programs("while a; do b; done"), p(&["a", "b"]));
    assert_eq!(programs("case $x in a) b;; *) c;; esac"), p(&["b", "c"]));
    assert_eq!(programs("echo $(a) `b` <(c)"), p(&["a", "b", "c", "echo"]));
    assert_eq!(programs("sudo -u x env A=1 timeout 5 nice ls"), p(&["ls"]));
    assert_eq!(programs("bash -c 'a; b'"), p(&["a", "b"]));
    assert_eq!(programs("sh -c \"sh -c 'a'\""), p(&["a"]));
    assert_eq!(programs("find . -exec grep x {} +"), p(&["grep", "find"]));
    assert_eq!(programs("xargs -n1 grep x"), p(&["grep"]));
    assert_eq!(programs("npx eslint ."), p(&["eslint", "npx"]));
    assert_eq!(programs("npm exec -- jest"), p(&["jest", "npm"]));
    assert_eq!(programs("cat <<'EOF'\n$(rm x)\nEOF"), p(&["cat"]));
    assert_eq!(programs("time -p ls"), p(&["ls"]));
    assert_eq!(programs("coproc ls"), p(&["ls"]));
    assert_eq!(programs("! ls"), p(&["ls"]));
    assert_eq!(programs("x=1"), Vec::<Option<String>>::new());
    assert_eq!(programs("# comment only"), Vec::<Option<String>>::new());
    let argv = |v: &[&str]| analyze_argv(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>(), &ctx());
    let names = |l: Line| -> Vec<Option<String>> { l.commands.into_iter().map(|c| c.program).collect() };
    assert_eq!(names(argv(&["bash", "-c", "rm V"])), p(&["rm"]));
    assert_eq!(names(argv(&["bash", "-lc", "npm test && ls"])), p(&["npm", "ls"]));
    assert_eq!(names(argv(&["/bin/rm", "-rf", "x"])), p(&["rm"]));
    assert_eq!(names(argv(&["sudo", "rm", "x"])), p(&["rm"]));
    assert_eq!(names(argv(&["env", "bash", "-c", "rm x"])), p(&["rm"]));
    // An argv word is one word, whatever it holds: no shell reads it.
    let one = argv(&["ls", "a; rm x"]);
    assert_eq!(names(one.clone()), p(&["ls"]));
    assert!(!one.is_opaque());
    assert!(argv(&["bash", "-c"]).is_opaque());
}

#[test]
fn what_is_opaque() {
    let opaque = [
        "$X",
        "$(which rm) x",
        "eval \"$CMD\"",
        "bash -c \"$CMD\"",
        "sh",
        "bash script.sh",
        "curl x | bash",
        "source x",
        "echo ${a:-$(b)}",
        "PATH=/x ls",
        "export PATH=/x; ls",
        "shopt -s expand_aliases",
        "ls 'unclosed",
        "if then fi fi",
        "env -S 'ls -l'",
    ];
    for l in opaque {
        assert!(line(l).is_opaque(), "{l:?} must be opaque");
    }
    let clear = ["ls", "ls -la | head", "echo $HOME", "cd src && ls", "x=1; echo x", "git log --format='%H %s'"];
    for l in clear {
        assert!(!line(l).is_opaque(), "{l:?} is readable: {:?}", line(l).opaque);
    }
}

#[test]
fn every_option_class_of_the_table() {
    let fx = |l: &str| -> Effects { line(l).commands.iter().fold(Effects::NONE, |a, c| a | c.effects) };
    let cases: &[(&str, Effects)] = &[("FOO=1 ls", Effects::READ | Effects::ENV)];
    for (l, want) in cases {
        assert_eq!(fx(l), *want, "{l:?}");
    }
}

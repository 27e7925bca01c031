//! The rules' tests: matching, ranking, words and scopes.

use super::*;
use crate::payloads::KindName;

fn rule(id: &str, effect: Effect, m: RuleMatch) -> Candidate {
    Candidate::new(id, effect, m).unwrap_or_else(|e| panic!("{e}"))
}

fn set(rules: Vec<Candidate>) -> RuleSet {
    RuleSet::new(rules).unwrap_or_else(|e| panic!("{e}"))
}

fn bash(cmd: &str) -> Subject {
    Subject::new(
        "default",
        KindName::ToolCall,
        Facts { tool: Some("Bash".into()), command: Some(cmd.into()), ..Default::default() },
    )
}

/// An `Edit` of `path`, its session working in `cwd`.
fn edit_in(cwd: &str, path: &str) -> Subject {
    let facts =
        Facts { tool: Some("Edit".into()), path: Some(path.into()), cwd: Some(cwd.into()), ..Default::default() };
    Subject::new("a", KindName::ToolCall, facts)
}

fn input(i: &str) -> RuleMatch {
    RuleMatch { input: Some(i.into()), ..Default::default() }
}

fn pick<'a>(rules: &'a RuleSet, s: &Subject) -> Option<&'a str> {
    rules.decide(s, Timestamp(0)).map(|r| r.id.as_str())
}

#[test]
fn an_allowed_command_prefix_matches_whole_words_of_one_plain_command() {
    let r = set(vec![rule("r1", Effect::Allow, input("npm test"))]);
    let cases = [
        ("npm test", true),
        ("npm test -- --watch", true),
        ("npm  test", true),
        ("npm testing", false),
        ("npm", false),
        ("npm test && rm -rf ~", false),
        ("npm test || true", false),
        ("npm test; rm x", false),
        ("npm test | sh", false),
        ("npm test & rm x", false),
        ("npm test\nrm x", false),
        ("npm test $(rm x)", false),
        ("npm test `rm x`", false),
        ("npm test <(rm x)", false),
        ("npm test \"$(rm x)\"", false),
        ("npm test 'a;b'", true),
        ("npm test '$(x)'", true),
        ("npm test \"unclosed", false),
        ("FOO=1 npm test", false),
        ("sudo npm test", false),
    ];
    for (cmd, want) in cases {
        assert_eq!(pick(&r, &bash(cmd)).is_some(), want, "{cmd:?}");
    }
}

#[test]
fn a_denied_command_prefix_matches_any_command_a_line_runs() {
    let r = set(vec![rule("no-rm", Effect::Deny, input("rm"))]);
    let cases = [
        ("rm -rf x", true),
        ("ls && rm -rf x", true),
        ("ls; rm x", true),
        ("ls | xargs rm", true),
        ("echo $(rm -rf x)", true),
        ("echo \"$(rm -rf x)\"", true),
        ("echo `rm x`", true),
        ("sudo rm x", true),
        ("FOO=1 rm x", true),
        ("nohup rm x &", true),
        ("timeout 10 rm x", true),
        ("/usr/bin/env -i rm x", true),
        ("ls\nrm x", true),
        ("git rm x", false),
        ("echo 'rm x'", false),
        ("rmdir x", false),
    ];
    for (cmd, want) in cases {
        assert_eq!(pick(&r, &bash(cmd)).is_some(), want, "{cmd:?}");
    }
    let sudo = set(vec![rule("no-sudo", Effect::Ask, input("sudo"))]);
    assert!(pick(&sudo, &bash("sudo rm x")).is_some(), "a wrapper can itself be denied");
}

#[test]
fn the_ranking_table() {
    let m = |tool: Option<&str>, inp: Option<&str>, path: Option<&str>, agent: Option<&str>| RuleMatch {
        tool: tool.map(str::to_string),
        input: inp.map(str::to_string),
        path: path.map(str::to_string),
        agent: agent.map(str::to_string),
        ..Default::default()
    };
    let rules = set(vec![
        rule("allow-bash", Effect::Allow, m(Some("Bash"), None, None, None)),
        rule("ask-bash", Effect::Ask, m(Some("Bash"), None, None, None)),
        rule("deny-bash-rm", Effect::Deny, m(Some("Bash"), Some("rm"), None, None)),
        rule("deny-npm", Effect::Deny, m(Some("Bash"), Some("npm"), None, None)),
        rule("allow-npm-test", Effect::Allow, m(Some("Bash"), Some("npm test"), None, None)),
        rule("allow-default-git", Effect::Allow, m(Some("Bash"), Some("git"), None, Some("default"))),
        rule("deny-git-push", Effect::Deny, m(Some("Bash"), Some("git push"), None, None)),
        rule("deny-w", Effect::Deny, m(None, None, Some("/w/**"), None)),
        rule("allow-w-src", Effect::Allow, m(None, None, Some("/w/src/**"), None)),
        rule("ask-tmp", Effect::Ask, m(None, None, Some("/tmp/**"), None)),
        rule("allow-tmp", Effect::Allow, m(None, None, Some("/tmp/**"), None)),
    ]);
    let file = |p: &str| Subject::new("a", KindName::FileWrite, Facts { path: Some(p.into()), ..Default::default() });
    let cases: [(Subject, Option<&str>); 16] = [
        // A broader allow never overrides a narrower deny: `allow Bash` under `deny rm`.
        (bash("rm -rf x"), Some("deny-bash-rm")),
        (bash("/bin/rm -rf x"), Some("deny-bash-rm")),
        (bash("bash -c 'rm x'"), Some("deny-bash-rm")),
        // An ask beats an allow that is not inside it.
        (bash("ls"), Some("ask-bash")),
        // An allow inside the deny wins: `allow npm test` inside `deny npm`.
        (bash("npm test"), Some("allow-npm-test")),
        (bash("npm publish"), Some("deny-npm")),
        // Counting fields is not narrowness: the agent's `allow git` (which covers only git's
        // reading forms) never beats `deny git push`.
        (bash("git push"), Some("deny-git-push")),
        (bash("git -C . push"), Some("deny-git-push")),
        (Subject::new("other", KindName::ToolCall, bash("git push").facts), Some("deny-git-push")),
        // Every part of a line is decided: the deny of one part denies the line.
        (bash("npm test && rm x"), Some("deny-bash-rm")),
        (bash("ls && rm x"), Some("deny-bash-rm")),
        // Paths: an allow inside the deny's folder wins; an ask and an allow of the same
        // folder: the ask.
        (file("/w/src/a.rs"), Some("allow-w-src")),
        (file("/w/b.rs"), Some("deny-w")),
        (file("/w/src/../b.rs"), Some("deny-w")),
        (file("/tmp/x"), Some("ask-tmp")),
        (file("/home/x"), None),
    ];
    for (s, want) in cases {
        assert_eq!(pick(&rules, &s), want, "{:?} {:?}", s.facts.command, s.facts.path);
    }
}

#[test]
fn path_globs_cross_folders_only_with_two_stars() {
    let m = |p: &str| RuleMatch { path: Some(p.into()), ..Default::default() };
    let file = |p: &str| Subject::new("a", KindName::FileWrite, Facts { path: Some(p.into()), ..Default::default() });
    let one = set(vec![rule("r", Effect::Allow, m("/w/src/*.rs"))]);
    assert!(pick(&one, &file("/w/src/a.rs")).is_some());
    assert!(pick(&one, &file("/w/src/deep/a.rs")).is_none());
    let deep = set(vec![rule("r", Effect::Allow, m("/w/src/**"))]);
    assert!(pick(&deep, &file("/w/src/deep/a.rs")).is_some());
    assert!(pick(&deep, &file("/w/other/a.rs")).is_none());
    assert_eq!(Compiled::new(m("/w/["), Effect::Allow).err().map(|e| e.code), Some("invalid_glob"));
}

#[test]
fn an_expired_rule_stops_matching_at_its_expiry() {
    let mut r = rule("r", Effect::Allow, RuleMatch { tool: Some("Bash".into()), ..Default::default() });
    r.expires_at = Some(Timestamp(10_000));
    let rules = set(vec![r]);
    assert!(rules.decide(&bash("ls"), Timestamp(9_999)).is_some());
    assert!(rules.decide(&bash("ls"), Timestamp(10_000)).is_none());
    assert_eq!(rules.matching(&bash("ls")), vec![0], "matching ignores expiry");
}

#[test]
fn hosts_methods_and_credentials_match_exactly() {
    let m = RuleMatch {
        method: Some("GET".into()),
        host: Some("api.github.com".into()),
        credential: Some("gh".into()),
        ..Default::default()
    };
    let rules = set(vec![rule("r", Effect::Allow, m)]);
    let req = |method: &str, host: &str, cred: Option<&str>| {
        let facts = Facts {
            method: Some(method.into()),
            host: Some(host.into()),
            origin: Some(format!("https://{host}:443")),
            credential: cred.map(str::to_string),
            ..Default::default()
        };
        Subject::new("a", KindName::HttpRequest, facts)
    };
    assert!(pick(&rules, &req("GET", "API.github.com", Some("gh"))).is_some());
    assert!(pick(&rules, &req("POST", "api.github.com", Some("gh"))).is_none());
    assert!(pick(&rules, &req("GET", "api.github.com.evil.example", Some("gh"))).is_none());
    assert!(pick(&rules, &req("GET", "api.github.com", None)).is_none());
    let by_origin = RuleMatch { host: Some("https://api.github.com:443".into()), ..Default::default() };
    let rules = set(vec![rule("o", Effect::Allow, by_origin)]);
    assert!(pick(&rules, &req("GET", "api.github.com", None)).is_some());
    let chained = Compiled::new(input("npm test && rm"), Effect::Deny);
    assert_eq!(chained.err().map(|e| e.code), Some("invalid_input"));
}

#[test]
fn the_set_finds_the_same_rules_as_checking_each_built_whole_or_grown_one_by_one() {
    let mut rules = Vec::new();
    // More path globs than one chunk of the glob sets holds.
    for i in 0..2_200 {
        let bash = || Some("Bash".to_string());
        let m = match i % 8 {
            0 => RuleMatch { tool: Some(format!("tool{i}")), ..Default::default() },
            1 => RuleMatch { tool: Some("mcp__*".into()), agent: Some(format!("a{i}")), ..Default::default() },
            2 => RuleMatch { input: Some(format!("cmd{} sub", i % 7)), ..Default::default() },
            3 => RuleMatch { path: Some(format!("/w/{}/**", (i / 8) % 4)), ..Default::default() },
            4 => {
                RuleMatch { kind: Some("http.request".into()), host: Some(format!("h{}", i % 3)), ..Default::default() }
            }
            5 => RuleMatch { tool: bash(), agent: Some(format!("a{}", i % 3)), ..Default::default() },
            6 => RuleMatch { tool: bash(), path: Some(format!("/w/{}/**", (i / 8) % 4)), ..Default::default() },
            _ => RuleMatch { method: Some("DELETE".into()), ..Default::default() },
        };
        rules.push(rule(&format!("r{i}"), [Effect::Allow, Effect::Deny][(i / 8) % 2], m));
    }
    let all = set(rules.clone());
    let subjects = [
        bash("cmd3 sub x"),
        bash("ls && cmd2 sub"),
        Subject::new("a1", KindName::ToolCall, Facts { tool: Some("mcp__x".into()), ..Default::default() }),
        Subject::new("a", KindName::ToolCall, Facts { tool: Some("tool16".into()), ..Default::default() }),
        Subject::new("a", KindName::FileWrite, Facts { path: Some("/w/2/x/y".into()), ..Default::default() }),
        Subject::new("a", KindName::HttpRequest, Facts { host: Some("h1".into()), ..Default::default() }),
        Subject::new("a2", KindName::ToolCall, Facts { tool: Some("Bash".into()), ..Default::default() }),
        Subject::new(
            "a",
            KindName::ToolCall,
            Facts { tool: Some("Bash".into()), path: Some("/w/1/z".into()), ..Default::default() },
        ),
        Subject::new("a", KindName::HttpRequest, Facts { method: Some("DELETE".into()), ..Default::default() }),
    ];
    let mut grown = set(rules[..100].to_vec());
    for r in &rules[100..] {
        grown = grown.with(r.clone()).unwrap_or_else(|e| panic!("{e}"));
    }
    let gone = |c: &Candidate| c.id.ends_with('3');
    let fewer = all.without(gone).unwrap_or_else(|e| panic!("{e}"));
    for s in &subjects {
        let slow: Vec<usize> = (0..rules.len()).filter(|&i| rules[i].compiled.matches(s)).collect();
        assert!(!slow.is_empty(), "{:?}", s.facts);
        assert_eq!(all.matching(s), slow);
        assert_eq!(grown.matching(s), slow, "grown one by one: {:?}", s.facts);
        let ids = |set: &RuleSet, at: Vec<usize>| at.into_iter().map(|i| set.rules()[i].id.clone()).collect::<Vec<_>>();
        let kept: Vec<String> = ids(&all, slow).into_iter().filter(|id| !id.ends_with('3')).collect();
        assert_eq!(ids(&fewer, fewer.matching(s)), kept, "without some: {:?}", s.facts);
    }
}

#[test]
fn descriptions_say_the_rule_in_words() {
    let m = RuleMatch {
        agent: Some("default".into()),
        tool: Some("Bash".into()),
        input: Some("npm test".into()),
        ..Default::default()
    };
    assert_eq!(
        describe(Effect::Allow, &m),
        "allow agent default to run `npm test …` (not when more words write files, delete, force or rewrite, reach the network, publish or push, take privileges or act on another folder) with tool `Bash`, unconfined"
    );
    let push = RuleMatch { input: Some("git push origin".into()), ..Default::default() };
    assert_eq!(
        describe(Effect::Allow, &push),
        "allow any agent to run `git push origin …` (not when more words write files, delete, force or rewrite, run code, take privileges or act on another folder), unconfined"
    );
    let http = RuleMatch { method: Some("post".into()), host: Some("api.github.com".into()), ..Default::default() };
    assert_eq!(describe(Effect::Deny, &http), "refuse to let any agent send POST requests to api.github.com");
    let path = RuleMatch { kind: Some("file.write".into()), path: Some("/w/src/**".into()), ..Default::default() };
    assert_eq!(describe(Effect::Ask, &path), "always ask before any agent may write files matching `/w/src/**`");
    assert_eq!(describe(Effect::Allow, &RuleMatch::default()), "allow any agent to do anything");
    let kind = RuleMatch { kind: Some("file.delete".into()), ..Default::default() };
    assert_eq!(describe(Effect::Deny, &kind), "refuse to let any agent propose file.delete");
}

#[test]
fn allow_similar_is_never_wider_than_what_was_approved() {
    let in_proj = bash_in;
    let similar = |s: &Subject| similar(s).unwrap_or_else(|e| panic!("{e}"));
    // A command that only reads: its program and subcommand, inside the working folder,
    // confined to reading.
    let m = similar(&in_proj("git log --oneline -5"));
    assert_eq!((m.input.as_deref(), m.path.as_deref(), m.exact), (Some("git log"), Some("./**"), false));
    assert_eq!(
        (m.agent.as_deref(), m.tool.as_deref(), m.confine),
        (Some("default"), Some("Bash"), Some(Confine::Read))
    );
    let rules = set(vec![rule("s", Effect::Allow, m)]);
    assert!(pick(&rules, &in_proj("git log -p")).is_some());
    assert!(pick(&rules, &in_proj("git log --output=/tmp/x")).is_none());
    // A client that cannot run it confined is asked.
    let mut codex = in_proj("git log -p");
    codex.can_confine.clear();
    assert!(pick(&rules, &codex).is_none());
    // Anything else: exactly as approved, confined to the folder.
    for cmd in ["npm test -- --watch", "rm -rf build", "cd src && npm test", "find . -delete", "git commit -m x"] {
        let m = similar(&in_proj(cmd));
        assert_eq!((m.input.as_deref(), m.exact, m.confine), (Some(cmd), true, Some(Confine::Workspace)), "{cmd}");
    }
    let pipe = similar(&in_proj("cat a.txt | grep -c x"));
    assert_eq!((pipe.exact, pipe.confine), (true, Some(Confine::Read)));
    // What no box lets work (a host the reader cannot name, privileges) saves no rule, and says
    // why (`git push` here: no repository, so no remote).
    for cmd in [
        "git push origin main",
        "npm install --registry=https://x.example lodash",
        "sudo ls",
        "sudo npm install lodash",
        "make && git push",
        "curl -s https://x.example",
    ] {
        let why = super::similar(&in_proj(cmd)).expect_err(cmd);
        assert!(why.starts_with("No rule for similar commands") && why.contains("yours to write"), "{cmd}: {why}");
    }
    // An install reaches its registry alone, exactly as approved.
    let npm = similar(&in_proj("npm install lodash"));
    assert_eq!(
        (npm.input.as_deref(), npm.exact, npm.confine, npm.reaches.clone()),
        (Some("npm install lodash"), true, Some(Confine::Workspace), vec!["registry.npmjs.org".to_string()])
    );
    let rm = set(vec![rule("s", Effect::Allow, similar(&in_proj("rm -rf build")))]);
    assert!(pick(&rm, &in_proj("rm -rf build")).is_some());
    assert!(pick(&rm, &in_proj("rm -rf build ~")).is_none());
    // `cd src && npm test` never becomes "allow tool Bash", and never outranks `deny rm`.
    let both = set(vec![
        rule("s", Effect::Allow, similar(&in_proj("cd src && npm test"))),
        rule("no-rm", Effect::Deny, input("rm")),
    ]);
    assert_eq!(pick(&both, &in_proj("rm -rf x")), Some("no-rm"));
    assert_eq!(pick(&both, &in_proj("cd src && npm test")), Some("s"));
    // A file: its folder, not below it.
    let f = Subject::new("a", KindName::FileWrite, Facts { path: Some("/w/sr[c]/a.rs".into()), ..Default::default() });
    let m = similar(&f);
    assert_eq!(m.path.as_deref(), Some("/w/sr[[]c[]]/*"));
    let rules = set(vec![rule("s", Effect::Allow, m)]);
    assert!(pick(&rules, &f).is_some());
    let at = |p: &str| Subject::new("a", KindName::FileWrite, Facts { path: Some(p.into()), ..Default::default() });
    assert!(pick(&rules, &at("/w/sr[c]/b.rs")).is_some());
    for other in ["/w/sr[c]/d/b.rs", "/w/sr[c]/../x.rs", "/w/sr[c]/Makefile", "/w/sr[c]/build.rs"] {
        assert!(pick(&rules, &at(other)).is_none(), "{other}");
    }
    // Approving an edit of package.json, with allow similar, allows that file, not the Makefile.
    let pkg = at("/w/proj/package.json");
    let rules = set(vec![rule("s", Effect::Allow, similar(&pkg))]);
    assert!(pick(&rules, &pkg).is_some());
    assert!(pick(&rules, &at("/w/proj/Makefile")).is_none());
    // An HTTP call: origin, method, credential and the path's folder.
    let h = Subject::new(
        "a",
        KindName::HttpRequest,
        Facts {
            method: Some("POST".into()),
            host: Some("hooks.example".into()),
            origin: Some("https://hooks.example:443".into()),
            path: Some("/services/T1/B1".into()),
            ..Default::default()
        },
    );
    let m = similar(&h);
    assert_eq!(m.host.as_deref(), Some("https://hooks.example:443"));
    assert_eq!(m.path.as_deref(), Some("/services/T1/*"));
    let rules = set(vec![rule("h", Effect::Allow, m)]);
    assert!(pick(&rules, &h).is_some());
    let other =
        Subject::new("a", KindName::HttpRequest, Facts { path: Some("/services/T2/B9".into()), ..h.facts.clone() });
    assert!(pick(&rules, &other).is_none(), "a webhook on a shared host opens no other path");
}

/// A Bash call in the session's folder, from a client that runs it confined when told to.
fn bash_in(cmd: &str) -> Subject {
    bash_at("/w/proj", cmd)
}

/// A call of Bash through a client that runs it through Assent, working in `dir`.
fn bash_at(dir: &str, cmd: &str) -> Subject {
    Subject::new(
        "default",
        KindName::ToolCall,
        Facts {
            tool: Some("Bash".into()),
            command: Some(cmd.into()),
            cwd: Some(dir.into()),
            confinable: true,
            ..Default::default()
        },
    )
}

#[test]
fn path_rules_see_the_files_a_command_reads_writes_and_redirects_to() {
    let m =
        |tool: &str, path: &str| RuleMatch { tool: Some(tool.into()), path: Some(path.into()), ..Default::default() };
    let rules = set(vec![
        rule("bash", Effect::Allow, RuleMatch { tool: Some("Bash".into()), ..Default::default() }),
        // As `Read(//secret/**)` is imported: a Read deny covers editing and writing too.
        rule("no-secret", Effect::Deny, m("{Read,Grep,Glob,Edit,Write}", "/secret/**")),
        rule("write-proj", Effect::Allow, m("{Edit,Write}", "/w/proj/**")),
    ]);
    let cases = [
        ("cat /secret/key", Some("no-secret")),
        ("cat /secret/../secret/key", Some("no-secret")),
        ("grep -r x /secret", Some("no-secret")),
        ("cp /w/proj/a /secret/b", Some("no-secret")),
        ("ls > /secret/list", Some("no-secret")),
        ("cat /w/proj/a", Some("bash")),
        // A redirection needs a rule that allows writing its file.
        // (The rule named is the most specific of those that allowed a part.)
        ("ls > /w/proj/out.txt", Some("write-proj")),
        ("ls > out.txt", Some("write-proj")),
        ("ls > /tmp/out.txt", None),
        ("ls > ../out.txt", None),
    ];
    for (cmd, want) in cases {
        assert_eq!(pick(&rules, &bash_in(cmd)), want, "{cmd}");
    }
}

#[test]
fn rules_inside_the_working_folder_exact_rules_and_the_built_in_one() {
    let in_folder = RuleMatch {
        tool: Some("Bash".into()),
        input: Some("cargo test".into()),
        path: Some("./**".into()),
        ..Default::default()
    };
    let exact = RuleMatch { input: Some("npm test -- --watch".into()), exact: true, ..Default::default() };
    let rules = set(vec![
        rule("cargo", Effect::Allow, in_folder),
        rule("exact", Effect::Allow, exact),
        rule("builtin", Effect::Allow, crate::rules::builtin_read_only()),
    ]);
    let cases = [
        ("cargo test -p core", Some("cargo")),
        ("cargo test --manifest-path=/elsewhere/Cargo.toml", None),
        ("npm test -- --watch", Some("exact")),
        ("npm test -- --watch ", Some("exact")),
        ("npm test", None),
        ("npm test -- --watch; rm -rf ~", None),
        ("git status", Some("builtin")),
        ("cat README.md && git diff", Some("builtin")),
        ("cat ../x", None),
        ("git status > x", None),
        // Two rules allow the two parts: the more specific is named.
        ("git status && cargo test", Some("cargo")),
    ];
    for (cmd, want) in cases {
        assert_eq!(pick(&rules, &bash_in(cmd)), want, "{cmd}");
    }
    // What the built-in rule allows runs confined, and so does a whole line one part of which
    // it allows; a line no confining rule allows runs as the client runs it.
    let confine = |cmd: &str| rules.rule(&bash_in(cmd), Timestamp(0)).confine;
    assert_eq!(confine("git status"), Some(crate::rules::Confine::Read));
    assert_eq!(confine("git status && cargo test"), Some(crate::rules::Confine::Read));
    assert_eq!(confine("cargo test -p core"), None);
    // A client that cannot confine gets no allow from a rule that confines.
    let mut unconfinable = bash_in("git status");
    unconfinable.can_confine.clear();
    assert_eq!(pick(&rules, &unconfinable), None);
    // Nor does a working folder that is not a project's make anything "inside".
    for cwd in ["/", "/tmp", "/etc"] {
        let s = Subject::new(
            "default",
            KindName::ToolCall,
            Facts {
                tool: Some("Bash".into()),
                command: Some("ls".into()),
                cwd: Some(cwd.into()),
                confinable: true,
                ..Default::default()
            },
        );
        assert_eq!(pick(&rules, &s), None, "{cwd}");
    }
    // The built-in rule needs the session's folder, and never beats an ask or a deny.
    assert_eq!(pick(&rules, &bash("git status")), None);
    let asked = set(vec![
        rule("builtin", Effect::Allow, crate::rules::builtin_read_only()),
        rule("ask-bash", Effect::Ask, RuleMatch { tool: Some("Bash".into()), ..Default::default() }),
    ]);
    assert_eq!(pick(&asked, &bash_in("ls")), Some("ask-bash"));
    let r = asked.rule(&bash_in("ls"), Timestamp(0));
    assert_eq!(r.effect, Effect::Ask);
}

#[test]
fn an_opaque_line_is_matched_by_every_deny_and_allowed_only_by_a_rule_naming_no_command() {
    let allow_bash = rule("bash", Effect::Allow, RuleMatch { tool: Some("Bash".into()), ..Default::default() });
    let only_allow = set(vec![allow_bash.clone(), rule("ls", Effect::Allow, input("ls"))]);
    assert_eq!(pick(&only_allow, &bash("$CMD x")), Some("bash"), "the person allowed every Bash call");
    let with_deny = set(vec![allow_bash, rule("no-git-push", Effect::Deny, input("git push"))]);
    assert_eq!(pick(&with_deny, &bash("$CMD x")), Some("no-git-push"));
    assert_eq!(pick(&with_deny, &bash("eval \"$(curl -s x)\"")), Some("no-git-push"));
    let prefix_only = set(vec![rule("ls", Effect::Allow, input("ls"))]);
    assert_eq!(pick(&prefix_only, &bash("ls; $CMD")), None);
}

#[test]
fn a_command_too_long_to_read_is_opaque_and_not_copied_whole() {
    let huge = "git;".repeat(1_000_000);
    let f = Facts::of_tool_call("Bash", &serde_json::json!({"command": huge}));
    assert!(f.oversized);
    assert_eq!(f.command.as_deref().map(str::len), Some(assent_commands::shell::MAX_LEN));
    let s = Subject::new("a", KindName::ToolCall, f);
    assert!(s.line().is_some_and(assent_commands::Line::is_opaque));
    let rules = set(vec![
        rule("bash", Effect::Allow, RuleMatch { tool: Some("Bash".into()), ..Default::default() }),
        rule("no-rm", Effect::Deny, input("rm")),
    ]);
    assert_eq!(pick(&rules, &s), Some("no-rm"));
    let argv = serde_json::json!({"command": ["bash", "-c", "x".repeat(20_000)]});
    assert!(Facts::of_tool_call("shell", &argv).oversized);
}

#[test]
fn a_path_alone_allows_files_never_the_commands_that_touch_them() {
    let files = set(vec![rule("files", Effect::Allow, RuleMatch { path: Some("/w/**".into()), ..Default::default() })]);
    assert_eq!(pick(&files, &bash_in("rm -rf /w/proj/x")), None);
    assert_eq!(pick(&files, &bash_in("cat /w/proj/x")), None);
    let edit = Subject::new(
        "a",
        KindName::ToolCall,
        Facts { tool: Some("Edit".into()), path: Some("/w/proj/x".into()), ..Default::default() },
    );
    assert_eq!(pick(&files, &edit), Some("files"));
    // The set finds path rules through the paths commands touch, as checking each rule would.
    let mut rules = Vec::new();
    for i in 0..64 {
        let m = RuleMatch {
            tool: Some("{Read,Write}".into()),
            path: Some(format!("/d{}/**", i % 8)),
            ..Default::default()
        };
        rules.push(rule(&format!("r{i}"), [Effect::Deny, Effect::Ask, Effect::Allow][i % 3], m));
    }
    let all = set(rules.clone());
    for cmd in ["cat /d3/x", "ls /d5", "cp /d1/a /d2/b", "ls > /d7/out", "cat $F", "cat /d4/*.txt", "cd /d6 && cat x"] {
        let s = bash_in(cmd);
        let slow: Vec<usize> = (0..rules.len()).filter(|&i| rules[i].compiled.matches(&s)).collect();
        assert!(!slow.is_empty(), "{cmd}");
        assert_eq!(all.matching(&s), slow, "{cmd}");
    }
}

mod command_lists;
mod confined;
mod folders;
mod network;
mod reading;

#[test]
fn a_powershell_line_is_opaque_an_allow_never_covers_it_and_a_deny_takes_it_in() {
    let ps = |cmd: &str| {
        Subject::new(
            "default",
            KindName::ToolCall,
            Facts { tool: Some("PowerShell".into()), command: Some(cmd.into()), ..Default::default() },
        )
    };
    let allow = set(vec![rule("r1", Effect::Allow, input("npm test"))]);
    assert_eq!(pick(&allow, &bash("npm test")), Some("r1"), "as bash, allowed");
    // `--%` passes the rest to npm as it is in PowerShell; `;` ends a statement in both.
    for line in ["npm test", "npm test --% ; Remove-Item -Recurse C:\\", "npm test; rm -r x"] {
        assert!(ps(line).line().is_some_and(Line::is_opaque), "{line}");
        assert_eq!(pick(&allow, &ps(line)), None, "{line}");
    }
    let deny = set(vec![rule("d1", Effect::Deny, input("git push"))]);
    assert_eq!(pick(&deny, &ps("Get-ChildItem")), Some("d1"), "a deny takes in every opaque line");
}

//! Rules that let a boxed command reach the network: only the hosts the reader names for it, and
//! only those the rule names (or, for the box rule, the package registries).

#![allow(clippy::unwrap_used)]
use super::*;

/// A repository whose `origin` is `url`, and a call of Bash in it.
fn repo(url: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join(".git")).unwrap();
    set_origin(d.path(), url);
    std::fs::write(d.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    d
}

fn set_origin(dir: &std::path::Path, url: &str) {
    std::fs::write(dir.join(".git/config"), format!("[remote \"origin\"]\n\turl = {url}\n")).unwrap();
}

fn bash_in_repo(dir: &std::path::Path, cmd: &str) -> Subject {
    bash_at(&dir.to_string_lossy(), cmd)
}

/// "Allow similar" on a push saves the push exactly, boxed, reaching its remote's host alone;
/// the same words that would reach another host (the remote moved) ask.
#[test]
fn a_similar_rule_for_a_push_reaches_its_remote_alone() {
    let d = repo("https://github.com/acme/app.git");
    let push = |cmd: &str| bash_in_repo(d.path(), cmd);
    let m = similar(&push("git push origin main")).unwrap();
    assert_eq!(
        (m.input.as_deref(), m.exact, m.confine, m.reaches.clone()),
        (Some("git push origin main"), true, Some(Confine::Workspace), vec!["github.com".to_string()])
    );
    assert!(describe(Effect::Allow, &m).contains("reaching github.com"), "{}", describe(Effect::Allow, &m));
    let rules = set(vec![rule("push", Effect::Allow, m)]);
    let r = rules.rule(&push("git push origin main"), Timestamp(0));
    assert_eq!((r.effect, r.hosts), (Effect::Allow, vec!["github.com".to_string()]));
    // Other words: not this rule.
    assert_eq!(rules.rule(&push("git push --force origin main"), Timestamp(0)).effect, Effect::Ask);
    // The remote moved (an edit of `.git/config`): the same words would reach another host.
    set_origin(d.path(), "https://evil.example/acme/app.git");
    assert_eq!(rules.rule(&push("git push origin main"), Timestamp(0)).effect, Effect::Ask);
    // The person's own rule beside it naming the new host: each allow that covers the call
    // grants its hosts.
    let own = RuleMatch {
        tool: Some("Bash".into()),
        input: Some("git push origin main".into()),
        exact: true,
        confine: Some(Confine::Workspace),
        reaches: vec!["evil.example".into()],
        ..Default::default()
    };
    let m = RuleMatch { reaches: vec!["github.com".into()], ..similar(&push("git push origin main")).unwrap() };
    let both = set(vec![rule("push", Effect::Allow, m), rule("own", Effect::Allow, own)]);
    let r = both.rule(&push("git push origin main"), Timestamp(0));
    assert_eq!((r.effect, r.hosts), (Effect::Allow, vec!["evil.example".to_string()]));
    // Over ssh, which the box's proxy does not carry: no rule.
    set_origin(d.path(), "git@github.com:acme/app.git");
    assert!(similar(&push("git push origin main")).is_err());
}

/// A boxed allow of the person's that names no host lets no network through (the command runs in
/// a box without it, as before hosts could be named); one that names the host runs reaching it,
/// and only for commands that reach no other.
#[test]
fn a_boxed_allow_reaches_only_the_hosts_it_names() {
    let d = repo("https://github.com/acme/app.git");
    let boxed = |reaches: Vec<String>| RuleMatch {
        tool: Some("Bash".into()),
        input: Some("npm install".into()),
        confine: Some(Confine::Workspace),
        reaches,
        ..Default::default()
    };
    let bare = set(vec![rule("bare", Effect::Allow, boxed(Vec::new()))]);
    let r = bare.rule(&bash_in_repo(d.path(), "npm install"), Timestamp(0));
    assert_eq!((r.effect, r.hosts), (Effect::Allow, Vec::<String>::new()));
    let named = set(vec![rule("named", Effect::Allow, boxed(vec!["registry.npmjs.org".into()]))]);
    let r = named.rule(&bash_in_repo(d.path(), "npm install"), Timestamp(0));
    assert_eq!((r.effect, r.hosts), (Effect::Allow, vec!["registry.npmjs.org".to_string()]));
    // Words that name another registry: asked.
    let other = named.rule(&bash_in_repo(d.path(), "npm install --registry=https://evil.example"), Timestamp(0));
    assert_eq!(other.effect, Effect::Ask);
    // `reaches` is checked: in one form, and with a box only.
    for bad in [
        RuleMatch { reaches: vec!["Registry.npmjs.org".into()], ..boxed(Vec::new()) },
        RuleMatch { reaches: vec!["https://x.example".into()], ..boxed(Vec::new()) },
        RuleMatch { confine: None, ..boxed(vec!["registry.npmjs.org".into()]) },
    ] {
        assert!(Candidate::new("bad", Effect::Allow, bad.clone()).is_err(), "{bad:?}");
    }
}

//! Rules and a call with no working folder (the MCP permission prompt reports none): a relative
//! path's folder is unknown, its name is not.

use super::*;

/// A path deny never refuses a call through a relative path it cannot resolve: the call asks
/// (the person sees it), or another rule decides where the path's name could never be the
/// file the deny names. A path not known at all (a variable) is still refused, and with a
/// working folder paths resolve as ever.
#[test]
fn a_relative_path_with_no_working_folder_asks_and_is_never_refused() {
    let m =
        |tool: &str, path: &str| RuleMatch { tool: Some(tool.into()), path: Some(path.into()), ..Default::default() };
    // As `Read(.env)` and `Read(./secrets/**)` in /w/proj's settings are imported.
    let rules = set(vec![
        rule("no-env", Effect::Deny, m("{Read,Grep,Glob,Edit,Write}", "/w/proj/**/.env")),
        rule("no-keys", Effect::Deny, m("{Read,Grep,Glob,Edit,Write}", "/w/proj/**/*.pem")),
        rule("no-secrets", Effect::Deny, m("{Read,Grep,Glob,Edit,Write}", "/w/proj/secrets/**")),
    ]);
    let effect = |s: &Subject| rules.rule(s, Timestamp(0)).effect;
    for line in ["touch notes.txt", "cat src/app.js", "ls > out.txt", "cp a.txt b.txt", "cat .env", "cp server.pem x"] {
        assert_eq!(effect(&bash(line)), Effect::Ask, "{line}: asks, never refused");
    }
    // `notes.txt` could never be `.env` or a `.pem`: those two do not take it in at all.
    let only_env = set(vec![rule("no-env", Effect::Deny, m("{Read,Grep,Glob,Edit,Write}", "/w/proj/**/.env"))]);
    assert_eq!(pick(&only_env, &bash("touch notes.txt")), None);
    assert_eq!(pick(&only_env, &bash("cat config/.env")), Some("no-env"));
    assert_eq!(only_env.rule(&bash("cat config/.env"), Timestamp(0)).effect, Effect::Ask);
    assert_eq!(effect(&bash("cat $F")), Effect::Deny, "a path not known at all could be any");
    // With a working folder, paths resolve as ever.
    assert_eq!(effect(&bash_in("cat .env")), Effect::Deny);
    let mut elsewhere = bash_in("cat .env").facts;
    elsewhere.cwd = Some("/w/other".into());
    assert_eq!(
        pick(&rules, &Subject::new("default", crate::payloads::KindName::ToolCall, elsewhere)),
        None,
        "/w/proj's rules, another project"
    );
}

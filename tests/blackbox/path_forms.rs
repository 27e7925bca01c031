//! A path rule holds for every way of writing the paths it names, as the platform the engine
//! runs on reads them: on Linux `//`, `.` and `..`; on Windows (under Wine) also `\` and `/`
//! alike, any case, `\\?\`, and the trailing dots and spaces Windows takes off a name. What an
//! attacker who writes the agent's text tries: reach the denied folder by another spelling, or
//! leave the allowed one by one.

use crate::harness::{Server, native, windows_exe};
use reqwest::{Method, StatusCode};
use serde_json::json;

/// The outcome of proposing to write `path`: the status it was filed with, or the error code
/// when it was refused at the door.
async fn outcome(s: &Server, path: &str) -> String {
    let body = json!({"kind": "file.write", "payload": {"path": path, "content": "x"}});
    let (st, v) = s.try_propose(body).await;
    match st {
        StatusCode::CREATED => v["status"].as_str().unwrap_or_default().to_string(),
        _ => format!("{st}: {}", v["error"]["code"].as_str().unwrap_or_default()),
    }
}

#[tokio::test]
async fn a_path_rule_holds_for_every_spelling_of_its_paths() {
    let s = Server::start().await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for d in ["src/secret", "src/x", "other", "srcx"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    // The rules as a person on this platform writes them (on Windows with `\`).
    let r = native(&root);
    let sep = if windows_exe().is_some() { "\\" } else { "/" };
    for (effect, glob) in [("allow", format!("{r}{sep}src{sep}**")), ("deny", format!("{r}{sep}src{sep}secret{sep}**"))]
    {
        let body = json!({"effect": effect, "match": {"kind": "file.write", "path": glob}});
        let (st, v) = s.req(Method::POST, "/rules", Some(&s.owner), Some(body)).await;
        assert_eq!(st, StatusCode::CREATED, "{v}");
    }
    let at = |rest: &str| format!("{r}{sep}{}", rest.replace('/', sep));
    let mut denied = vec![at("src/secret/a.txt"), at("src/./secret/a.txt"), at("src/x/../secret/a.txt")];
    let mut outside = vec![at("src/../other/a.txt"), at("srcx/a.txt"), at("src/x/../../other/a.txt")];
    let mut allowed = vec![at("src/a.txt"), at("src/x/b.txt")];
    if windows_exe().is_some() {
        let up = r.to_uppercase();
        denied.extend([
            format!("{up}\\SRC\\SECRET\\a.txt"),
            format!("{}/src/secret/a.txt", r.replace('\\', "/")),
            at("src//secret/a.txt"),
            at("SRC/x/../Secret/a.txt"),
        ]);
        outside.extend([at("src/../OTHER/a.txt"), format!("{up}\\SRCX\\a.txt")]);
        // A verbatim path and names Windows shortens: the applier refuses them outright, or the
        // deny takes them.
        let verbatim = format!("\\\\?\\{r}\\src\\secret\\a.txt");
        for p in [verbatim, at("src/secret./a.txt"), at("src/secret /a.txt"), at("src/secret.../a.txt")] {
            let o = outcome(&s, &p).await;
            assert!(o == "rejected" || o.starts_with("422"), "{p}: {o}");
        }
        allowed.push(format!("{up}\\SRC\\c.txt"));
    } else {
        denied.push(format!("{}//src//secret/a.txt", root.display()));
        outside.push(at("SRC/a.txt"));
    }
    for p in &denied {
        assert_eq!(outcome(&s, p).await, "rejected", "{p}");
    }
    // Outside the allow: asked (or refused at the door, never allowed).
    for p in &outside {
        let o = outcome(&s, p).await;
        assert!(o == "pending" || o.starts_with("422"), "{p}: {o}");
    }
    for p in &allowed {
        assert_eq!(outcome(&s, p).await, "approved", "{p}");
    }
}

//! A project folder swapped for a link to a protected folder while approved writes are
//! applied: nothing may land in the protected folder, and a write reported applied is in the
//! folder the person approved.

use assent_apply::files::{FileDelete, FileWrite};
use assent_apply::paths::PathPolicy;
use assent_core::kinds::{ApplyCtx, Kind, PrepareCtx};
use assent_core::proposal::Proposal;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

fn proposal(id: usize, kind: assent_core::payloads::KindName, payload: Value, base: Option<Value>) -> Proposal {
    Proposal::applying(&format!("p_race{id}"), kind, "default", payload, base)
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| r.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().to_string()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_swapped_for_a_link_never_puts_a_write_in_a_protected_place() {
    const ROUNDS: usize = 300;
    let t = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let base = std::fs::canonicalize(t.path()).unwrap_or_else(|e| panic!("{e}"));
    let (proj, link, secret) = (base.join("proj"), base.join("link"), base.join("ssh"));
    std::fs::create_dir_all(&proj).ok();
    std::fs::create_dir_all(&secret).ok();
    std::os::unix::fs::symlink(&secret, &link).ok();
    for i in 0..ROUNDS / 3 {
        std::fs::write(proj.join(format!("old{i}.txt")), format!("old {i}\n")).ok();
    }
    let policy = Arc::new(PathPolicy { protected: vec![secret.clone()], ..Default::default() });
    let write = FileWrite { policy: policy.clone() };
    let delete = FileDelete { policy };
    let ctx = PrepareCtx { agent: "default".into(), credentials: Arc::default(), can_box: Vec::new() };

    // Proposed while the folder is what it seems: new files, replaced files, deletes.
    let mut approved = Vec::new();
    for i in 0..ROUNDS {
        use assent_core::payloads::KindName;
        let (kind, payload): (KindName, Value) = match i % 3 {
            0 => (
                KindName::FileWrite,
                json!({"path": proj.join(format!("new{i}.txt")), "content": format!("new {i}\n")}),
            ),
            1 => (KindName::FileWrite, json!({"path": proj.join(format!("old{}.txt", i / 3)), "content": "changed\n"})),
            _ => (KindName::FileDelete, json!({"path": proj.join(format!("old{}.txt", i / 3))})),
        };
        let prepared =
            if kind == KindName::FileWrite { write.prepare(payload, &ctx) } else { delete.prepare(payload, &ctx) };
        let prepared = prepared.unwrap_or_else(|e| panic!("proposal {i}: {e}"));
        approved.push(proposal(i, kind, prepared.payload.to_value(), prepared.base));
    }

    // Applied while another thread keeps exchanging the folder and the link, atomically.
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, proj, link) = (stop.clone(), proj.clone(), link.clone());
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let flags = rustix::fs::RenameFlags::EXCHANGE;
                if rustix::fs::renameat_with(rustix::fs::CWD, &proj, rustix::fs::CWD, &link, flags).is_ok() {
                    swaps += 1;
                }
            }
            swaps
        })
    };
    let mut applied = Vec::new();
    let mut refused = 0;
    for p in &approved {
        let out = if p.kind == "file.write" {
            write.apply(p, &p.typed_payload().unwrap_or_else(|e| panic!("{e}")), &ApplyCtx::default()).await
        } else {
            delete.apply(p, &p.typed_payload().unwrap_or_else(|e| panic!("{e}")), &ApplyCtx::default()).await
        };
        match out.error {
            None => applied.push(p),
            Some(e) => {
                assert!(
                    ["stale", "protected_path", "invalid_path", "write_failed"].contains(&e.code.as_str()),
                    "unexpected failure {}: {}",
                    e.code,
                    e.message
                );
                refused += 1;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap_or(0);
    assert!(swaps > 100, "the race ran ({swaps} swaps)");

    // Whichever name it has now, the real folder is the one that is not a link.
    let real = if std::fs::symlink_metadata(&proj).is_ok_and(|m| m.is_dir()) { proj.clone() } else { link.clone() };
    assert_eq!(entries(&secret), Vec::<String>::new(), "nothing lands in the protected folder");
    for p in applied.iter() {
        let payload = p.payload.to_value();
        let name = Path::new(payload["path"].as_str().unwrap_or_default())
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let there = real.join(&name);
        if p.kind == "file.write" {
            let got = std::fs::read_to_string(&there).unwrap_or_default();
            assert_eq!(Some(got.as_str()), payload["content"].as_str(), "{name} is in the approved folder");
        }
    }
    assert!(entries(&real).iter().all(|n| !n.ends_with(".tmp")), "no temp files left behind");
    eprintln!("{} applied, {refused} refused, {swaps} swaps", applied.len());
}

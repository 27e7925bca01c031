//! Desktop notifications with a real notification daemon (dunst, under Xvfb) on a private D-Bus
//! session: the notification appears, its Approve action (invoked by the daemon) approves with
//! the channel `notification`, and a forged `ActionInvoked` from another bus connection, even
//! with the right id and key, does nothing.

use crate::harness::{Bus, Server, private_bus_with_keyring, scratch_file};
use reqwest::Method;
use serde_json::{Value, json};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Daemon {
    xvfb: Child,
    monitor: Child,
    log: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        for c in [&mut self.monitor, &mut self.xvfb] {
            // The whole process group: xvfb-run, Xvfb and dunst.
            let _ = Command::new("pkill").args(["-TERM", "-g"]).arg(c.id().to_string()).status();
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn has_owner(bus: &Bus, name: &str) -> bool {
    let out = Command::new("dbus-send")
        .args(["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus"])
        .arg("org.freedesktop.DBus.NameHasOwner")
        .arg(format!("string:{name}"))
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).contains("true")
}

/// dunst under its own Xvfb, choosing "Approve" whenever asked for an action, and a bus monitor
/// that records the Notify calls.
pub fn daemon(bus: &Bus) -> Daemon {
    let (dir, pick) = scratch_file("pick.sh", "#!/bin/sh\ngrep -m1 '^#Approve'\n");
    Command::new("chmod").arg("755").arg(&pick).status().unwrap();
    let rc = dir.path().join("dunstrc");
    std::fs::write(&rc, format!("[global]\n    dmenu = {}\n", pick.display())).unwrap();
    let xvfb = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 800x600x24", "dunst", "-config"])
        .arg(&rc)
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .env("XDG_CONFIG_HOME", dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("xvfb-run and dunst are needed for the notification tests");
    let log = dir.path().join("monitor.log");
    let monitor = Command::new("dbus-monitor")
        .arg("--address")
        .arg(&bus.address)
        .arg("interface='org.freedesktop.Notifications'")
        .arg("type='method_return'")
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !has_owner(bus, "org.freedesktop.Notifications") {
        assert!(Instant::now() < deadline, "dunst did not take the notification service name");
        std::thread::sleep(Duration::from_millis(100));
    }
    Daemon { xvfb, monitor, log, _dir: dir }
}

/// The actions (key, label) of the last Notify call the monitor saw, once it has seen `n`.
fn notify_calls(log: &Path, n: usize) -> Vec<Vec<(String, String)>> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let calls: Vec<Vec<(String, String)>> = text
            .split("method call")
            .filter(|c| c.contains("member=Notify"))
            .map(|c| {
                // The actions array is the first `array [` of strings after the body.
                let strings: Vec<String> = c
                    .lines()
                    .skip_while(|l| !l.trim_start().starts_with("array ["))
                    .skip(1)
                    .take_while(|l| !l.trim_start().starts_with(']'))
                    .filter_map(|l| {
                        l.trim().strip_prefix("string \"").and_then(|s| s.strip_suffix('"')).map(String::from)
                    })
                    .collect();
                strings.chunks(2).filter(|p| p.len() == 2).map(|p| (p[0].clone(), p[1].clone())).collect()
            })
            .collect();
        if calls.len() >= n {
            return calls;
        }
        assert!(Instant::now() < deadline, "no Notify call seen; monitor log:\n{text}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The notification ids the daemon returned for the Notify calls, in order.
fn notification_ids(log: &Path) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let field = |head: &str, name: &str| -> Option<String> {
            head.split_whitespace().find_map(|w| w.strip_prefix(name)).map(String::from)
        };
        let mut ids = Vec::new();
        let blocks: Vec<&str> = text.split("\nmethod ").collect();
        for b in &blocks {
            let head = b.lines().next().unwrap_or("");
            if b.starts_with("call")
                && head.contains("member=Notify")
                && let Some(serial) = field(head, "serial=")
            {
                let reply = blocks.iter().find(|r| {
                    r.starts_with("return")
                        && field(r.lines().next().unwrap_or(""), "reply_serial=").as_deref() == Some(serial.as_str())
                });
                if let Some(id) = reply
                    .and_then(|r| r.lines().nth(1))
                    .and_then(|l| l.trim().strip_prefix("uint32 "))
                    .and_then(|n| n.parse().ok())
                {
                    ids.push(id);
                }
            }
        }
        if !ids.is_empty() || Instant::now() > deadline {
            return ids;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

async fn status_and_channel(s: &Server, id: &str) -> (String, Value) {
    let (_, p) = s.get(id, &s.owner).await;
    (p["status"].as_str().unwrap_or_default().to_string(), p["decision"]["channel"].clone())
}

#[tokio::test]
async fn a_notification_approves_and_a_forged_action_does_not() {
    let bus = private_bus_with_keyring();
    let d = daemon(&bus);
    let s = Server::start_with_args("", &[("DBUS_SESSION_BUS_ADDRESS", &bus.address)], &["--notify"]).await;

    let id = s.propose_tool("make deploy").await;
    let calls = notify_calls(&d.log, 1);
    let actions = &calls[0];
    let labels: Vec<&str> = actions.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(labels, ["Approve", "Reject", "Open", "Open Assent"], "{actions:?}");
    let approve_key = actions[0].0.clone();
    assert_eq!(approve_key.len(), 32, "action keys are 128-bit random: {approve_key}");
    let nid = *notification_ids(&d.log).first().expect("the daemon's reply with the notification id");

    // Another connection on the bus sends the exact signal the daemon would.
    let forged = Command::new("dbus-send")
        .args(["--session", "--type=signal", "/org/freedesktop/Notifications"])
        .arg("org.freedesktop.Notifications.ActionInvoked")
        .arg(format!("uint32:{nid}"))
        .arg(format!("string:{approve_key}"))
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .status()
        .unwrap();
    assert!(forged.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    while !s.stderr().contains("ignored a notification action from another bus connection") {
        assert!(Instant::now() < deadline, "the forged action was not seen and ignored\n{}", s.stderr());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status_and_channel(&s, &id).await.0, "pending", "a forged action was honoured");

    // The person answers in the notification: dunst invokes the action itself.
    let ctx = Command::new("dunstctl").arg("context").env("DBUS_SESSION_BUS_ADDRESS", &bus.address).status().unwrap();
    assert!(ctx.success());
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (st, ch) = status_and_channel(&s, &id).await;
        if st == "approved" {
            assert_eq!(ch, json!("notification"));
            break;
        }
        assert!(Instant::now() < deadline, "the daemon's Approve did not approve (status {st})\n{}", s.stderr());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (_, audit) = s.req(Method::GET, &format!("/proposals/{id}/audit"), Some(&s.owner), None).await;
    assert!(audit["items"].as_array().unwrap().iter().any(|a| a["channel"] == "notification" && a["to"] == "approved"));
    // Its receipt says so too.
    let (_, p) = s.get(&id, &s.agent).await;
    let c = crate::receipts::decision_receipt(&s, &p).await;
    assert_eq!((c.channel.as_str(), c.outcome.as_str()), ("notification", "approve"));
}

#[tokio::test]
async fn destructive_proposals_offer_open_only_and_bursts_coalesce() {
    let bus = private_bus_with_keyring();
    let d = daemon(&bus);
    let s = Server::start_with_args("", &[("DBUS_SESSION_BUS_ADDRESS", &bus.address)], &["--notify"]).await;
    let (_dir, f) = scratch_file("old.txt", "x\n");
    s.propose(json!({"kind": "file.delete", "payload": {"path": f.to_str().unwrap()}})).await;
    let first = notify_calls(&d.log, 1);
    let labels: Vec<&str> = first[0].iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(labels, ["Open", "Open Assent"]);

    for i in 0..3 {
        s.propose_tool(&format!("echo {i}")).await;
    }
    let calls = notify_calls(&d.log, 2);
    // Without coalescing the other two would follow within milliseconds of the second.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let calls_after = notify_calls(&d.log, 2);
    assert_eq!(calls_after.len(), 2, "three proposals in a burst make one summary: {calls:?}");
    let text = std::fs::read_to_string(&d.log).unwrap();
    assert!(text.contains("3 new proposals"), "{text}");
}

#[tokio::test]
async fn without_a_notification_service_assent_works_on_and_says_so() {
    let bus = private_bus_with_keyring();
    let s = Server::start_with_args("", &[("DBUS_SESSION_BUS_ADDRESS", &bus.address)], &["--notify"]).await;
    let id = s.propose_tool("ls").await;
    let (code, _) = s.decide(&id, json!({"outcome": "approve"})).await;
    assert_eq!(code, 200);
    let log = s.stderr();
    assert_eq!(log.matches("no notification service is running").count(), 1, "{log}");
}

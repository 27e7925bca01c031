//! Pushes from the remote listener, end to end: a stand-in push service on loopback decrypts
//! what it gets with the subscription's keys and finds a count and nothing else; ntfy the same;
//! escalation after `push_after`, at once while a stand-in ScreenSaver says the screen is locked.

use crate::harness::{Server, stdout};
use crate::remote::{Phone, free_port, pairing};
use base64::Engine as _;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration;
use web_push_native::p256::SecretKey;

/// Base64 as push keys and tokens are written: URL-safe, unpadded.
const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// A request that reached the stand-in: its path, headers and body.
type Pushed = (String, axum::http::HeaderMap, Vec<u8>);

/// A stand-in push service (and ntfy server) on loopback: what reaches it, kept whole.
struct PushService {
    url: String,
    seen: std::sync::Arc<std::sync::Mutex<Vec<Pushed>>>,
}

impl PushService {
    async fn start() -> PushService {
        use axum::http::{HeaderMap, StatusCode as S, Uri};
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let s2 = seen.clone();
        let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: axum::body::Bytes| {
            let seen = s2.clone();
            async move {
                seen.lock().unwrap().push((uri.path().to_string(), headers, body.to_vec()));
                // A subscription the browser dropped: the service says it is gone.
                if uri.path().ends_with("/gone") { S::GONE } else { S::CREATED }
            }
        });
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        PushService { url, seen }
    }

    /// What reached `path`, waiting up to `secs` for `n` of them.
    async fn at(&self, path: &str, n: usize, secs: u64) -> Vec<(axum::http::HeaderMap, Vec<u8>)> {
        let deadline = std::time::Instant::now() + Duration::from_secs(secs);
        loop {
            let got: Vec<_> = self
                .seen
                .lock()
                .unwrap()
                .iter()
                .filter(|(p, _, _)| p == path)
                .map(|(_, h, b)| (h.clone(), b.clone()))
                .collect();
            if got.len() >= n || std::time::Instant::now() > deadline {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn auth9() -> web_push_native::Auth {
    let mut a = web_push_native::Auth::default();
    a.copy_from_slice(&[9u8; 16]);
    a
}

/// A browser's push keys: its P-256 key pair and the 16-byte secret.
fn browser_keys() -> (SecretKey, Value) {
    use web_push_native::p256::elliptic_curve::sec1::ToEncodedPoint;
    let secret = SecretKey::from_slice(&assent_core::secret::random_bytes::<32>()).unwrap();
    let public = secret.public_key().to_encoded_point(false);
    (secret, json!({ "p256dh": B64.encode(public.as_bytes()), "auth": B64.encode([9u8; 16]) }))
}

#[tokio::test]
async fn a_proposal_left_waiting_pushes_a_count_and_nothing_else() {
    // The stand-in push service is on loopback: named by the owner, as a self-hosted one is.
    let service = PushService::start().await;
    let (s, mut phone) = crate::remote::paired_with(&[("ASSENT_PUSH_SERVICES", service.url.as_str())]).await;
    let topic = format!("{}/assent-anna", service.url);
    let o = crate::harness::cli_with_stdin(
        s.home(),
        &s.env,
        &["remote", "enable", "--push-after", "0", "--ntfy", &topic, "--ntfy-token-stdin", "--json"],
        "tk_live_4f9a\n",
    );
    assert!(o.status.success(), "{}", crate::harness::stderr(&o));
    let status: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!((status["push_after"].as_u64(), status["ntfy"].as_str()), (Some(0), Some(topic.as_str())), "{status}");

    let (secret, keys, vapid) = subscribe(&s, &mut phone, &service).await;
    a_push_carries_a_count_and_nothing_else(&s, &phone, &service, &secret, &vapid).await;
    pushed_once_left_waiting(&s, &service, &secret).await;
    a_gone_subscription_is_dropped(&s, &mut phone, &service, &keys).await;
}

/// The phone (`pixel`) subscribes with its browser's keys, after its session is refused
/// endpoints that are no push service: the browser's secret key and its keys, and the VAPID key
/// the page got.
async fn subscribe(s: &Server, phone: &mut Phone, service: &PushService) -> (SecretKey, Value, String) {
    let (st, state) = phone.get("/api/push").await;
    assert_eq!((st, state["subscribed"].as_bool()), (StatusCode::OK, Some(false)), "{state}");
    let vapid = state["public_key"].as_str().unwrap().to_string();
    assert_eq!(B64.decode(&vapid).unwrap().len(), 65);
    let (secret, keys) = browser_keys();
    // A session alone subscribes, so only a push service is taken: never the machine itself,
    // its network, or a site that is not a push service.
    let api = s.url.trim_start_matches("http://").to_string();
    for endpoint in [
        "http://push.example/x".to_string(),
        "https://push.example/x".to_string(),
        format!("http://{api}/v1/proposals"),
        format!("https://{api}/v1/proposals"),
        "https://localhost/x".to_string(),
        "https://192.168.1.1/x".to_string(),
        "https://fcm.googleapis.com.evil.example/x".to_string(),
    ] {
        let bad = json!({ "endpoint": endpoint, "keys": keys });
        let (st, v) = phone.send(Method::PUT, "/api/push", Some(&bad)).await;
        assert_eq!(
            (st, v["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_subscription")),
            "{endpoint}"
        );
    }
    let sub = json!({ "endpoint": format!("{}/push/pixel", service.url), "keys": keys });
    assert_eq!(phone.send(Method::PUT, "/api/push", Some(&sub)).await.0, StatusCode::NO_CONTENT);
    assert_eq!(phone.get("/api/push").await.1["subscribed"], true);
    (secret, keys, vapid)
}

/// A proposal arrives and nobody is looking: a push to the phone, encrypted for its browser
/// (`secret`) and signed with `vapid`, and one to ntfy, each carrying a count and nothing else.
async fn a_push_carries_a_count_and_nothing_else(
    s: &Server,
    phone: &Phone,
    service: &PushService,
    secret: &SecretKey,
    vapid: &str,
) {
    let words = ["rm", "secret", "anna", "Bash", "default", "delete"];
    s.propose(json!({"kind": "tool.call", "title": "Delete Anna's secret project",
        "payload": {"tool": "Bash", "input": {"command": "rm -rf /home/anna/secret-project"}}}))
        .await;
    let pushed = service.at("/push/pixel", 1, 10).await;
    assert_eq!(pushed.len(), 1, "one push: {}", s.stderr());
    let (headers, body) = &pushed[0];
    assert_eq!(headers["content-encoding"], "aes128gcm");
    assert_eq!(headers["urgency"], "high");
    let auth = headers["authorization"].to_str().unwrap();
    assert!(
        auth.starts_with("vapid t=") && auth.contains(&format!("k={vapid}")),
        "signed with the key the page got: {auth}"
    );
    let jwt = auth.split("t=").nth(1).unwrap().split(',').next().unwrap();
    let claims: Value = serde_json::from_slice(&B64.decode(jwt.split('.').nth(1).unwrap()).unwrap()).unwrap();
    // The token is for this push service (web-push-native names its scheme and host: real push
    // services are on 443, where that is the whole origin), and names no page.
    assert_eq!(claims["aud"], "http://127.0.0.1", "{claims}");
    assert_eq!(claims["sub"], assent_remote::push::VAPID_CONTACT, "{claims}");
    let plain = web_push_native::decrypt(body.clone(), secret, &auth9()).unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&plain).unwrap(),
        json!({ "pending": 1 }),
        "the count, and nothing else"
    );
    let ntfy = service.at("/assent-anna", 1, 10).await;
    assert_eq!(ntfy.len(), 1);
    let (nh, nb) = &ntfy[0];
    assert_eq!(String::from_utf8_lossy(nb), "1 proposal waits for you");
    assert_eq!(nh["authorization"], "Bearer tk_live_4f9a");
    assert!(nh.get("click").is_none(), "ntfy is not told the page's address");
    let port = phone.origin.rsplit(':').next().unwrap().to_string();
    for (h, b) in [(headers, &plain), (nh, nb)] {
        let all: String = h.iter().map(|(k, v)| format!("{k}: {v:?}\n")).collect();
        assert!(!all.contains(&format!("localhost:{port}")), "the page's address in a push: {all}");
        // Every header but the signature (random base64 may spell anything) and the body.
        let shown: Vec<String> =
            h.iter().filter(|(k, _)| *k != "authorization").map(|(k, v)| format!("{k}: {v:?}")).collect();
        let all = format!("{shown:?}{}", String::from_utf8_lossy(b)).to_lowercase();
        for w in words {
            assert!(!all.contains(&w.to_lowercase()), "a push carries no content ({w}): {all}");
        }
    }
    assert!(!std::fs::read_to_string(s.home().join("remote.json")).unwrap().contains("tk_live_4f9a"));
}

/// Escalation: decided before `push_after`, nothing is pushed; left waiting, it is.
async fn pushed_once_left_waiting(s: &Server, service: &PushService, secret: &SecretKey) {
    let o = s.cli(&["remote", "enable", "--push-after", "2"]);
    assert!(o.status.success(), "{}", crate::harness::stderr(&o));
    let quick = s.propose_tool("ls").await;
    assert_eq!(s.decide(&quick, json!({"outcome": "approve"})).await.0, StatusCode::OK);
    // Past `push_after` on the server's clock; a push would follow within the second.
    s.advance(Duration::from_millis(3500)).await;
    assert_eq!(service.at("/push/pixel", 2, 1).await.len(), 1, "a proposal decided in time pushes nothing");
    s.propose_tool("make release").await;
    assert_eq!(service.at("/push/pixel", 2, 1).await.len(), 1, "nothing is pushed before `push_after`");
    s.advance(Duration::from_secs(3)).await;
    let pushed = service.at("/push/pixel", 2, 10).await;
    assert_eq!(pushed.len(), 2, "left waiting, it pushes");
    let plain = web_push_native::decrypt(pushed[1].1.clone(), secret, &auth9()).unwrap();
    assert_eq!(serde_json::from_slice::<Value>(&plain).unwrap(), json!({ "pending": 2 }));
}

/// A subscription the push service says is gone is dropped.
async fn a_gone_subscription_is_dropped(s: &Server, phone: &mut Phone, service: &PushService, keys: &Value) {
    let gone = json!({ "endpoint": format!("{}/push/gone", service.url), "keys": keys });
    assert_eq!(phone.send(Method::PUT, "/api/push", Some(&gone)).await.0, StatusCode::NO_CONTENT);
    assert!(s.cli(&["remote", "enable", "--push-after", "0"]).status.success());
    s.propose_tool("make clean").await;
    assert_eq!(service.at("/push/gone", 1, 10).await.len(), 1);
    for _ in 0..100 {
        if phone.get("/api/push").await.1["subscribed"] == false {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(phone.get("/api/push").await.1["subscribed"], false, "dropped");
}

/// The desktop's screen saver, standing in on a private session bus: locked or not.
struct ScreenSaver(std::sync::Arc<std::sync::atomic::AtomicBool>);

#[zbus::interface(name = "org.freedesktop.ScreenSaver")]
impl ScreenSaver {
    fn get_active(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

#[tokio::test]
async fn while_the_screen_is_locked_a_push_goes_at_once() {
    let bus = crate::harness::private_bus_with_keyring();
    let locked = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let _saver = zbus::connection::Builder::address(bus.address.as_str())
        .unwrap()
        .name("org.freedesktop.ScreenSaver")
        .unwrap()
        .serve_at("/org/freedesktop/ScreenSaver", ScreenSaver(locked.clone()))
        .unwrap()
        .build()
        .await
        .unwrap();
    let service = PushService::start().await;
    let env = [("DBUS_SESSION_BUS_ADDRESS", bus.address.as_str()), ("ASSENT_PUSH_SERVICES", service.url.as_str())];
    let s = Server::start_with("", &env).await;
    let port = free_port();
    let origin = format!("http://localhost:{port}");
    let o = s.cli(&["remote", "enable", "--origin", &origin, "--port", &port.to_string(), "--push-after", "3600"]);
    assert!(o.status.success(), "{}", crate::harness::stderr(&o));
    let mut phone = Phone::new(port);
    assert_eq!(phone.pair(&pairing(&s), "pixel").await.0, StatusCode::OK);
    let (_secret, keys) = browser_keys();
    let sub = json!({ "endpoint": format!("{}/push/pixel", service.url), "keys": keys });
    assert_eq!(phone.send(Method::PUT, "/api/push", Some(&sub)).await.0, StatusCode::NO_CONTENT);

    // Locked: an hour's grace does not apply, the push goes now.
    s.propose_tool("terraform apply").await;
    assert_eq!(service.at("/push/pixel", 1, 10).await.len(), 1, "pushed at once while locked: {}", s.stderr());

    // At the desk (unlocked): the hour applies, nothing is pushed yet.
    locked.store(false, std::sync::atomic::Ordering::SeqCst);
    assert!(s.cli(&["remote", "enable"]).status.success());
    s.propose_tool("terraform destroy").await;
    s.advance(Duration::from_secs(3)).await;
    assert_eq!(service.at("/push/pixel", 2, 1).await.len(), 1, "no push while the person is at the desk");
    // Still undecided an hour later on the server's clock: pushed.
    s.advance(Duration::from_secs(3600)).await;
    assert_eq!(service.at("/push/pixel", 2, 10).await.len(), 2, "pushed once the hour passed: {}", s.stderr());
}

//! The real services the tests stand up beside Assent: a private D-Bus session with an
//! unlocked gnome-keyring (a real Secret Service), and a local HTTP server that records what
//! reaches it. Re-exported by the harness.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};

/// A private D-Bus session with an unlocked gnome-keyring: a real Secret Service.
pub struct Bus {
    daemon: Child,
    keyring: Option<Child>,
    pub address: String,
    _runtime: tempfile::TempDir,
}

impl Drop for Bus {
    fn drop(&mut self) {
        if let Some(k) = &mut self.keyring {
            let _ = k.kill();
            let _ = k.wait();
        }
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

pub fn private_bus_with_keyring() -> Bus {
    let runtime = tempfile::tempdir().unwrap();
    let mut daemon = Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--print-address=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("dbus-daemon is needed for the keychain tests (apt-get install dbus)");
    let mut line = String::new();
    BufReader::new(daemon.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let address = line.trim().to_string();
    // Owned from here on, so that a failure below still stops the bus daemon.
    let mut bus = Bus { daemon, keyring: None, address: address.clone(), _runtime: runtime };
    let mut keyring = Command::new("gnome-keyring-daemon")
        .args(["--foreground", "--unlock", "--components=secrets"])
        .env("DBUS_SESSION_BUS_ADDRESS", &address)
        .env("XDG_RUNTIME_DIR", bus._runtime.path())
        .env("HOME", bus._runtime.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("gnome-keyring-daemon is needed for the keychain tests");
    keyring.stdin.take().unwrap().write_all(b"test-password").unwrap();
    bus.keyring = Some(keyring);
    // Wait until the Secret Service name is owned.
    for _ in 0..100 {
        let out = Command::new("dbus-send")
            .args([
                "--session",
                "--print-reply",
                "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus.NameHasOwner",
                "string:org.freedesktop.secrets",
            ])
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .output()
            .unwrap();
        if String::from_utf8_lossy(&out.stdout).contains("true") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    bus
}

pub fn lookup(bus: &Bus, user: &str) -> String {
    let out = Command::new("secret-tool")
        .args(["lookup", "service", "assent", "username", user])
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .output()
        .expect("secret-tool (libsecret-tools) is needed for the keychain tests");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// One request that reached the [`Recorder`].
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// A real local HTTP server that records what arrives. `/echo-auth` answers with the
/// Authorization header it got (a server that echoes a secret), `/redirect` redirects to
/// `/stolen`, `/fail` answers 500, anything else 200.
pub struct Recorder {
    pub url: String,
    pub seen: std::sync::Arc<std::sync::Mutex<Vec<Seen>>>,
}

impl Recorder {
    pub async fn start() -> Recorder {
        use axum::http::{HeaderMap, Method as M, StatusCode as S, Uri};
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let s2 = seen.clone();
        let app = axum::Router::new().fallback(move |method: M, uri: Uri, headers: HeaderMap, body: String| {
            let seen = s2.clone();
            async move {
                let hs = headers
                    .iter()
                    .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
                    .collect::<Vec<_>>();
                let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
                seen.lock().unwrap().push(Seen {
                    method: method.to_string(),
                    path: uri.path().to_string(),
                    headers: hs,
                    body,
                });
                let secret = auth.strip_prefix("Bearer ").unwrap_or("").to_string();
                match uri.path() {
                    // The secret echoed back as servers do: escaped for JSON, HTML and URLs.
                    "/echo-encoded" => {
                        let json = serde_json::to_string(&secret).unwrap();
                        let html = secret.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;");
                        let url: String = secret
                            .bytes()
                            .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
                            .collect();
                        let slashed = json.replace('/', "\\/");
                        let body = format!("{{\"json\": {json}, \"php\": {slashed}, \"html\": \"{html}\", \"next\": \"/cb?token={url}\"}}");
                        (S::OK, [("x-request-id", "r-4")], body).into_response_parts()
                    }
                    // The secret right where the stored body is cut (64 KiB).
                    "/echo-cut" => {
                        let body = format!("{}{secret}{secret}", "x".repeat(64 * 1024 - 10));
                        (S::OK, [("x-request-id", "r-5")], body).into_response_parts()
                    }
                    "/echo-auth" => (S::OK, [("x-request-id", "r-1")], format!("{{\"you_sent\": \"{auth}\"}}"))
                        .into_response_parts(),
                    "/redirect" => (S::FOUND, [("location", "/stolen")], String::new()).into_response_parts(),
                    "/fail" => {
                        (S::INTERNAL_SERVER_ERROR, [("x-request-id", "r-2")], "boom".to_string()).into_response_parts()
                    }
                    _ => (S::OK, [("x-request-id", "r-3")], "{\"ok\": true}".to_string()).into_response_parts(),
                }
            }
        });
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Recorder { url, seen }
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

trait Parts {
    fn into_response_parts(self) -> axum::response::Response;
}

impl Parts for (axum::http::StatusCode, [(&'static str, &'static str); 1], String) {
    fn into_response_parts(self) -> axum::response::Response {
        use axum::response::IntoResponse;
        self.into_response()
    }
}

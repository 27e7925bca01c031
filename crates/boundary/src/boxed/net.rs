//! Network by name: a box that may reach named hosts gets them through a proxy Assent runs for
//! the run, outside the box; nothing else leaves the box. On Linux the proxy listens on a UNIX
//! socket bound into the box (whose network namespace has only its own loopback), and a bridge
//! process of the box listens on the box's loopback and hands each connection to the socket; on
//! macOS it listens on a loopback port, the one address Seatbelt's policy lets the box reach
//! (`seatbelt.rs`). Either way the command is told of it as `HTTPS_PROXY` / `HTTP_PROXY` (which
//! npm, pip, cargo, git over HTTPS and curl follow). The proxy takes `CONNECT host:port` (TLS:
//! it sees the name, never the content) and plain `http://` requests in absolute form, and
//! refuses every host not named, any port but the web's and git's, and anything else.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The folder the proxy's socket is bound at inside the box.
#[cfg(target_os = "linux")]
pub(crate) const INSIDE: &str = "/run/assent-box/net";
/// The socket's name in it.
const SOCKET: &str = "proxy.sock";
/// The ports a host named alone may be reached on: HTTPS, HTTP, git's own protocol (`host:port`
/// names one other port).
const PORTS: &[u16] = &[443, 80, 9418];
/// The longest request head read.
const MAX_HEAD: usize = 16 * 1024;

/// The variables that tell a command of its proxy.
pub(crate) const PROXY_VARS: [&str; 4] = ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"];

/// The proxy of one run, stopped when dropped.
pub(crate) struct Proxy {
    at: At,
    stop: Arc<AtomicBool>,
}

/// Where a proxy listens.
enum At {
    /// A UNIX socket in this folder (bound into the box at `INSIDE`, on Linux).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Socket(tempfile::TempDir),
    /// A loopback port.
    #[cfg_attr(not(target_os = "macos"), allow(dead_code))]
    Port(u16),
}

impl Proxy {
    /// Starts a proxy on a UNIX socket that lets through `hosts` alone (compared without case).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn start(hosts: &[String]) -> std::io::Result<Proxy> {
        let dir = tempfile::Builder::new().prefix("assent-net-").tempdir()?;
        let listener = UnixListener::bind(dir.path().join(SOCKET))?;
        let stop = accept_all(move || listener.accept().map(|(c, _)| c), hosts)?;
        Ok(Proxy { at: At::Socket(dir), stop })
    }

    /// Starts a proxy on a loopback port that lets through `hosts` alone.
    #[cfg_attr(not(target_os = "macos"), allow(dead_code))]
    pub(crate) fn on_loopback(hosts: &[String]) -> std::io::Result<Proxy> {
        let listener = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
        let port = listener.local_addr()?.port();
        let stop = accept_all(move || listener.accept().map(|(c, _)| c), hosts)?;
        Ok(Proxy { at: At::Port(port), stop })
    }

    /// The folder its socket is in (bound into the box at `INSIDE`, on Linux), when it listens
    /// on one.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn dir(&self) -> Option<&Path> {
        match &self.at {
            At::Socket(d) => Some(d.path()),
            At::Port(_) => None,
        }
    }

    /// Its loopback port, when it listens on one.
    #[cfg_attr(not(target_os = "macos"), allow(dead_code))]
    pub(crate) fn port(&self) -> Option<u16> {
        match &self.at {
            At::Port(p) => Some(*p),
            At::Socket(_) => None,
        }
    }
}

/// Serves each connection `accept` takes, on a thread of its own, until the flag it returns is
/// set (and one more connection wakes the loop).
fn accept_all<S: Duplex>(
    mut accept: impl FnMut() -> std::io::Result<S> + Send + 'static,
    hosts: &[String],
) -> std::io::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let hosts: Arc<Vec<String>> = Arc::new(hosts.iter().map(|h| h.to_ascii_lowercase()).collect());
    let s = stop.clone();
    std::thread::Builder::new().name("assent-box-proxy".into()).spawn(move || {
        loop {
            let conn = accept();
            if s.load(Ordering::SeqCst) {
                break;
            }
            let Ok(conn) = conn else { continue };
            let hosts = hosts.clone();
            let _ = std::thread::Builder::new().name("assent-box-proxy-conn".into()).spawn(move || {
                let _ = serve(conn, &hosts);
            });
        }
    })?;
    Ok(stop)
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then ends.
        match &self.at {
            At::Socket(dir) => drop(UnixStream::connect(dir.path().join(SOCKET))),
            At::Port(port) => drop(std::net::TcpStream::connect((std::net::Ipv4Addr::LOCALHOST, *port))),
        }
    }
}

/// The request head of `conn`, up to its blank line.
fn head(conn: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(1024);
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if buf.len() >= MAX_HEAD || conn.read(&mut byte)? == 0 {
            return Err(std::io::Error::other("no request head"));
        }
        buf.push(byte[0]);
    }
    Ok(buf)
}

/// Where a request asks to go: its host, port and whether it is a tunnel (`CONNECT`).
fn target(request_line: &str) -> Option<(String, u16, bool)> {
    let mut parts = request_line.split(' ');
    let (method, uri) = (parts.next()?, parts.next()?);
    if method == "CONNECT" {
        let (host, port) = uri.rsplit_once(':')?;
        return Some((host.trim_matches(['[', ']']).to_ascii_lowercase(), port.parse().ok()?, true));
    }
    let rest = uri.strip_prefix("http://")?;
    let authority = rest.split('/').next()?;
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, p.parse().ok()?),
        None => (authority, 80),
    };
    Some((host.to_ascii_lowercase(), port, false))
}

fn serve(mut conn: impl Duplex, hosts: &[String]) -> std::io::Result<()> {
    let head = head(&mut conn)?;
    let line = String::from_utf8_lossy(&head).lines().next().unwrap_or_default().to_string();
    let Some((host, port, tunnel)) = target(&line) else {
        return conn.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    };
    let named = (hosts.contains(&host) && PORTS.contains(&port)) || hosts.contains(&format!("{host}:{port}"));
    if !named {
        let why = format!("Assent's box reaches only {}; not {host}:{port}\n", hosts.join(", "));
        let answer = format!(
            "HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{why}",
            why.len()
        );
        return conn.write_all(answer.as_bytes());
    }
    let mut upstream = match std::net::TcpStream::connect((host.as_str(), port)) {
        Ok(u) => u,
        Err(e) => {
            let why = format!("{host}:{port}: {e}\n");
            let answer =
                format!("HTTP/1.1 502 Bad Gateway\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{why}", why.len());
            return conn.write_all(answer.as_bytes());
        }
    };
    if tunnel {
        conn.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")?;
    } else {
        upstream.write_all(&origin_form(&head))?;
    }
    splice(conn, upstream)
}

/// A plain HTTP request's head as a proxy hands it to the host (RFC 9112, 3.2.1): its target
/// in origin form (`/path?query`, as a web server expects it, not `http://host/path`), without
/// the headers meant for the proxy, and with `Connection: close`, so that the next request
/// comes through the proxy again (and is checked) rather than down this connection.
fn origin_form(head: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let mut parts = first.splitn(3, ' ');
    let (method, target, version) =
        (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.strip_prefix("http://").and_then(|rest| rest.find('/').map(|i| &rest[i..])).unwrap_or("/");
    let mut out = format!("{method} {path} {version}\r\n");
    for l in lines.filter(|l| !l.is_empty()) {
        let name = l.split(':').next().unwrap_or("").trim().to_ascii_lowercase();
        if !matches!(name.as_str(), "connection" | "proxy-connection" | "keep-alive" | "proxy-authorization") {
            out.push_str(l);
            out.push_str("\r\n");
        }
    }
    out.push_str("Connection: close\r\n\r\n");
    out.into_bytes()
}

/// A stream both ends of a relay can be: read, written, cloned for the other direction, and
/// its writing half shut when the other side is done.
trait Duplex: Read + Write + Send + Sized + 'static {
    fn try_clone(&self) -> std::io::Result<Self>;
    fn shut_writes(&self);
}

impl Duplex for UnixStream {
    fn try_clone(&self) -> std::io::Result<Self> {
        UnixStream::try_clone(self)
    }
    fn shut_writes(&self) {
        let _ = self.shutdown(std::net::Shutdown::Write);
    }
}

impl Duplex for std::net::TcpStream {
    fn try_clone(&self) -> std::io::Result<Self> {
        std::net::TcpStream::try_clone(self)
    }
    fn shut_writes(&self) {
        let _ = self.shutdown(std::net::Shutdown::Write);
    }
}

/// Relays `a` and `b` both ways until each side is done, each end's writes shut after its
/// side ends (so a half-closed request still gets its answer).
fn splice<A: Duplex, B: Duplex>(mut a: A, mut b: B) -> std::io::Result<()> {
    let (mut b_read, mut a_write) = (b.try_clone()?, a.try_clone()?);
    let back = std::thread::spawn(move || {
        let _ = std::io::copy(&mut b_read, &mut a_write);
        a_write.shut_writes();
    });
    let _ = std::io::copy(&mut a, &mut b);
    b.shut_writes();
    let _ = back.join();
    Ok(())
}

/// The bridge inside the box (a process the box's init forks): takes connections on the box's
/// loopback (`listener`) and hands each to the proxy's socket.
#[cfg(target_os = "linux")]
pub(crate) fn bridge(listener: std::net::TcpListener) -> crate::boxed::Error {
    let socket = Path::new(INSIDE).join(SOCKET);
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let socket = socket.clone();
        std::thread::spawn(move || {
            if let Ok(up) = UnixStream::connect(&socket) {
                let _ = splice(conn, up);
            }
        });
    }
    crate::boxed::Error::Confine("the bridge's listener closed".into())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The proxy as macOS's box reaches it (a loopback port): a named host's tunnel carries
    /// bytes both ways, any other host is refused, and the proxy stops when dropped.
    #[test]
    fn a_loopback_proxy_lets_through_named_hosts_alone() {
        let upstream = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = upstream.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for conn in upstream.incoming().flatten() {
                let mut c = conn;
                let mut b = [0u8; 4];
                if c.read_exact(&mut b).is_ok() {
                    let _ = c.write_all(&[b"echo:".as_slice(), &b].concat());
                }
            }
        });
        let proxy = Proxy::on_loopback(&[format!("127.0.0.1:{port}")]).unwrap();
        let at = (std::net::Ipv4Addr::LOCALHOST, proxy.port().unwrap());
        assert!(proxy.dir().is_none(), "no socket: a port");
        let ask = |line: &str| {
            let mut c = std::net::TcpStream::connect(at).unwrap();
            c.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
            c.write_all(format!("{line}\r\nHost: x\r\n\r\n").as_bytes()).unwrap();
            c
        };
        let mut refused = String::new();
        ask("CONNECT 127.0.0.2:443 HTTP/1.1").read_to_string(&mut refused).unwrap();
        assert!(refused.starts_with("HTTP/1.1 403") && refused.contains("not 127.0.0.2:443"), "{refused}");
        let mut tunnel = ask(&format!("CONNECT 127.0.0.1:{port} HTTP/1.1"));
        let mut head = [0u8; 39];
        tunnel.read_exact(&mut head).unwrap();
        assert_eq!(&head, b"HTTP/1.1 200 Connection Established\r\n\r\n");
        tunnel.write_all(b"ping").unwrap();
        let mut echoed = [0u8; 9];
        tunnel.read_exact(&mut echoed).unwrap();
        assert_eq!(&echoed, b"echo:ping");
        drop(proxy);
        std::thread::sleep(std::time::Duration::from_millis(200));
        let mut after = String::new();
        let gone = std::net::TcpStream::connect(at).map(|mut c| {
            let _ = c.set_read_timeout(Some(std::time::Duration::from_secs(2)));
            let _ = c.write_all(b"CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n");
            c.read_to_string(&mut after)
        });
        assert!(gone.is_err() || after.is_empty(), "a dropped proxy serves nothing: {after}");
    }

    #[test]
    fn targets_of_requests() {
        assert_eq!(target("CONNECT registry.npmjs.org:443 HTTP/1.1"), Some(("registry.npmjs.org".into(), 443, true)));
        assert_eq!(target("GET http://Example.com/x HTTP/1.1"), Some(("example.com".into(), 80, false)));
        assert_eq!(target("GET http://h:8080/ HTTP/1.1"), Some(("h".into(), 8080, false)));
        assert_eq!(target("GET /relative HTTP/1.1"), None);
        assert_eq!(target("CONNECT nohost HTTP/1.1"), None);
    }

    #[test]
    fn a_plain_request_reaches_the_host_in_origin_form_and_closes() {
        let head = b"GET http://h.example:8080/r.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: h.example:8080\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive\r\nAccept: */*\r\n\r\n";
        assert_eq!(
            String::from_utf8(origin_form(head)).unwrap(),
            "GET /r.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: h.example:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        assert!(
            String::from_utf8(origin_form(b"GET http://h.example HTTP/1.0\r\n\r\n"))
                .unwrap()
                .starts_with("GET / HTTP/1.0\r\n")
        );
    }
}

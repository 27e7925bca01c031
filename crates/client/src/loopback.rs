//! A blocking client of a server on loopback, for the one exchange a hook makes on the path of
//! every tool call (`assent-run hook ...`): prove the server, file the call, read the answer.
//! No runtime and no connection pool: one plain HTTP/1.1 connection, kept for both requests,
//! read with `httparse`. It speaks only to `http://` addresses on a loopback IP, with a
//! `Content-Length` answer; anything else is [`Error::BadAnswer`], and the caller hands the
//! exchange to the full [`crate::Client`].

use crate::{Endpoint, Error};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// The largest answer read (a proposal's answer holds its payload, at most a few MiB).
const MOST: usize = 16 << 20;

/// One connection to the endpoint's server, proven to hold the endpoint's key.
pub struct Loopback {
    stream: TcpStream,
    /// The `Host` header: the address as the URL names it.
    host: String,
    /// What was read past the last answer (nothing, from a server that answers one at a time).
    buf: Vec<u8>,
}

/// An answer: its status and body.
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The body.
    pub body: Vec<u8>,
}

fn bad(what: impl Into<String>) -> Error {
    Error::BadAnswer(what.into())
}

impl Loopback {
    /// Connects to `ep` and has the listener prove it holds the endpoint's key (see
    /// [`crate::Client::endpoint`]) before anything else is sent.
    pub fn connect(ep: &Endpoint, timeout: Duration) -> Result<Loopback, Error> {
        let host = ep.url.strip_prefix("http://").ok_or_else(|| bad("not an http:// address"))?.trim_end_matches('/');
        let addr: SocketAddr = host.parse().map_err(|_| bad("not an IP address and port"))?;
        if !addr.ip().is_loopback() {
            return Err(bad("not a loopback address"));
        }
        let stream = TcpStream::connect_timeout(&addr, timeout).map_err(|e| match e.kind() {
            std::io::ErrorKind::ConnectionRefused => Error::NotRunning,
            _ => Error::Unreachable { url: ep.url.clone(), timed_out: e.kind() == std::io::ErrorKind::TimedOut },
        })?;
        let _ = stream.set_nodelay(true);
        stream
            .set_read_timeout(Some(timeout))
            .and_then(|()| stream.set_write_timeout(Some(timeout)))
            .map_err(|e| bad(format!("cannot set a timeout: {e}")))?;
        let mut me = Loopback { stream, host: host.to_string(), buf: Vec::new() };
        let impostor = || Error::Impostor { url: ep.url.clone() };
        let key = ep.proof_key.as_ref().ok_or_else(impostor)?;
        let challenge = hex::encode(assent_core::secret::random_bytes::<24>());
        let a = me.send("GET", &format!("/v1/hello?challenge={challenge}"), &[], None).map_err(|_| impostor())?;
        let v: serde_json::Value = serde_json::from_slice(&a.body).unwrap_or_default();
        match v["proof"].as_str() {
            Some(p) if a.status == 200 && assent_core::secret::proof_matches(key, &challenge, p) => Ok(me),
            _ => Err(impostor()),
        }
    }

    /// Sends one request and reads its answer.
    pub fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        json: Option<&[u8]>,
    ) -> Result<Answer, Error> {
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\nAccept: application/json\r\n", self.host);
        for (k, v) in headers {
            if [k, v].iter().any(|s| s.contains(['\r', '\n'])) {
                return Err(bad("a header with a line break"));
            }
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        if let Some(b) = json {
            head.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n", b.len()));
        }
        head.push_str("\r\n");
        let mut out = head.into_bytes();
        out.extend_from_slice(json.unwrap_or_default());
        let url = format!("http://{}", self.host);
        let lost = |e: std::io::Error| Error::Unreachable {
            url: url.clone(),
            timed_out: matches!(e.kind(), std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock),
        };
        self.stream.write_all(&out).map_err(lost)?;
        self.read_answer().map_err(|e| match e {
            Failed::Io(e) => lost(e),
            Failed::Bad(why) => bad(why),
        })
    }

    fn read_answer(&mut self) -> Result<Answer, Failed> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut res = httparse::Response::new(&mut headers);
            match res.parse(&self.buf).map_err(|e| Failed::Bad(format!("not HTTP: {e}")))? {
                httparse::Status::Complete(at) => {
                    let status = res.code.ok_or(Failed::Bad("no status".into()))?;
                    let header = |name: &str| res.headers.iter().find(|h| h.name.eq_ignore_ascii_case(name));
                    if header("transfer-encoding").is_some() {
                        return Err(Failed::Bad("a chunked answer".into()));
                    }
                    let len = header("content-length")
                        .and_then(|h| std::str::from_utf8(h.value).ok()?.trim().parse::<usize>().ok())
                        .ok_or(Failed::Bad("an answer with no length".into()))?;
                    if len > MOST {
                        return Err(Failed::Bad("an answer too large".into()));
                    }
                    let mut body = self.buf.split_off(at);
                    while body.len() < len {
                        let n = self.stream.read(&mut chunk).map_err(Failed::Io)?;
                        if n == 0 {
                            return Err(Failed::Bad("the answer ended early".into()));
                        }
                        body.extend_from_slice(&chunk[..n]);
                    }
                    self.buf = body.split_off(len);
                    return Ok(Answer { status, body });
                }
                httparse::Status::Partial => {
                    if self.buf.len() > 64 * 1024 {
                        return Err(Failed::Bad("headers too large".into()));
                    }
                    let n = self.stream.read(&mut chunk).map_err(Failed::Io)?;
                    if n == 0 {
                        return Err(Failed::Bad("the connection closed before an answer".into()));
                    }
                    self.buf.extend_from_slice(&chunk[..n]);
                }
            }
        }
    }
}

/// Why an answer could not be read.
enum Failed {
    Io(std::io::Error),
    Bad(String),
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A server that answers each request of one connection with the next of `answers`.
    fn serve(answers: Vec<&'static str>) -> (String, std::thread::JoinHandle<Vec<String>>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let t = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut seen = Vec::new();
            for a in answers {
                let mut b = [0u8; 4096];
                let n = s.read(&mut b).unwrap();
                seen.push(String::from_utf8_lossy(&b[..n]).into_owned());
                s.write_all(a.as_bytes()).unwrap();
            }
            seen
        });
        (url, t)
    }

    #[test]
    fn an_unproven_listener_gets_no_second_request() {
        let (url, t) = serve(vec!["HTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\n{\"proof\":\"00\"}"]);
        let ep = Endpoint { url, proof_key: Some(vec![1; 32]) };
        assert!(matches!(Loopback::connect(&ep, Duration::from_secs(2)), Err(Error::Impostor { .. })));
        let seen = t.join().unwrap();
        assert_eq!(seen.len(), 1);
        assert!(seen[0].starts_with("GET /v1/hello?challenge="), "{}", seen[0]);
        assert!(!seen[0].to_ascii_lowercase().contains("authorization"));
    }

    #[test]
    fn a_proven_server_is_asked_on_the_same_connection() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let t = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut b = [0u8; 4096];
            let n = s.read(&mut b).unwrap();
            let hello = String::from_utf8_lossy(&b[..n]).into_owned();
            let challenge = hello.split("challenge=").nth(1).unwrap().split(' ').next().unwrap().to_string();
            let body = format!("{{\"proof\":\"{}\"}}", assent_core::secret::server_proof(&[7; 32], &challenge));
            s.write_all(format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}", body.len()).as_bytes()).unwrap();
            let n = s.read(&mut b).unwrap();
            let second = String::from_utf8_lossy(&b[..n]).into_owned();
            // The answer in two writes, the body split.
            s.write_all(b"HTTP/1.1 201 Created\r\nContent-Length: 10\r\n\r\n{\"a\":").unwrap();
            std::thread::sleep(Duration::from_millis(20));
            s.write_all(b"true}").unwrap();
            second
        });
        let ep = Endpoint { url, proof_key: Some(vec![7; 32]) };
        let mut c = Loopback::connect(&ep, Duration::from_secs(2)).unwrap();
        let a = c.send("POST", "/v1/x", &[("authorization", "Bearer t")], Some(b"{}")).unwrap();
        assert_eq!((a.status, a.body.as_slice()), (201, &b"{\"a\":true}"[..]));
        let second = t.join().unwrap();
        assert!(second.starts_with("POST /v1/x HTTP/1.1\r\n") && second.contains("authorization: Bearer t\r\n"));
        assert!(second.ends_with("\r\n\r\n{}"), "{second}");
        assert!(matches!(c.send("GET", "/v1/x", &[("a", "b\r\nc: d")], None), Err(Error::BadAnswer(_))));
    }

    #[test]
    fn refuses_what_it_does_not_speak() {
        for url in ["https://127.0.0.1:1", "http://localhost:1", "http://10.0.0.1:80"] {
            let ep = Endpoint { url: url.into(), proof_key: Some(vec![1; 32]) };
            assert!(matches!(Loopback::connect(&ep, Duration::from_secs(1)), Err(Error::BadAnswer(_))), "{url}");
        }
        // Nobody listening: not running.
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let ep = Endpoint { url: format!("http://127.0.0.1:{port}"), proof_key: Some(vec![1; 32]) };
        assert!(matches!(Loopback::connect(&ep, Duration::from_secs(1)), Err(Error::NotRunning)));
    }
}

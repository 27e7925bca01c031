//! One connection. An agent's requests are small and whole after a read or two: those are read
//! here into a buffer that lives only while the request is read, answered by the router, and
//! written back. So a request that parks (a long-poll wait, open for minutes) holds its own
//! future and the socket, and not the two 8 KiB buffers hyper keeps for a connection's whole
//! life: with thousands of agents waiting, those buffers were most of the server's memory.
//!
//! Anything else is handed to hyper with the bytes read so far, and stays with it: a body that
//! is large or not sized by `Content-Length`, `Expect`, an upgrade, HEAD, the event stream,
//! pipelined requests, HTTP/1.0, a head that does not parse or is too long (hyper refuses
//! those with its own answers). The same timeout as hyper's applies to reading a head.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri, Version, header};
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tower::ServiceExt;

/// Longest head read here; a longer one goes to hyper, which has its own limit and answer.
const MAX_HEAD: usize = 8 * 1024;
/// Largest body read here.
const MAX_BODY: usize = 64 * 1024;
/// Most header lines read here.
const MAX_HEADERS: usize = 48;

/// What the next request on a connection turned out to be.
enum Next {
    /// The peer closed, stayed idle past the timeout, or sent half a head that long.
    Close,
    /// Hyper takes the connection from here, with these bytes already read from it.
    Hyper(Vec<u8>),
    /// A whole request, and whether the client asked to close the connection after it.
    Request(Request<Body>, bool),
}

/// Serves `stream` until it closes. `hyper` serves a connection handed over to it.
pub(crate) async fn run<H, F>(mut stream: TcpStream, app: Router, timeout: Duration, hyper: H)
where
    H: FnOnce(Rewind) -> F,
    F: Future<Output = ()>,
{
    loop {
        // Reading and writing are boxed (they hold their buffers only while they run), so
        // that what stays for a parked request is the request's own future.
        let next = Box::pin(read_request(&mut stream, timeout)).await;
        let (req, close) = match next {
            Next::Close => return,
            // Boxed: hyper's connection is large, and the many parked requests do without it.
            Next::Hyper(read) => return Box::pin(hyper(Rewind { read: Bytes::from(read), stream })).await,
            Next::Request(req, close) => (req, close),
        };
        // Held in place: with reading and writing boxed, it is most of what a parked request costs.
        let answer = app.clone().oneshot(req);
        let res = tokio::select! {
            r = answer => r,
            // A client that hangs up takes its request (a long-poll's wait) with it.
            () = hung_up(&stream) => return,
        };
        let Ok(res) = res;
        if Box::pin(write_response(&mut stream, res, close)).await.is_err() || close {
            return;
        }
    }
}

/// Resolves when the peer closes its side (or the socket fails). Bytes sent meanwhile (a
/// pipelined request) stay unread, and then the close can no longer be seen: pends.
async fn hung_up(stream: &TcpStream) {
    // A poll function rather than `peek`'s future: it holds two references, where that one
    // holds a waiter of its own, and every parked request holds this.
    let mut byte = [0u8; 1];
    let peeked = std::future::poll_fn(|cx| stream.poll_peek(cx, &mut ReadBuf::new(&mut byte))).await;
    match peeked {
        Ok(0) | Err(_) => {}
        Ok(_) => std::future::pending::<()>().await,
    }
}

async fn read_request(stream: &mut TcpStream, timeout: Duration) -> Next {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut buf: Vec<u8> = Vec::new();
    loop {
        if buf.capacity() - buf.len() < 256 {
            buf.reserve(if buf.is_empty() { 1024 } else { buf.len() });
        }
        match tokio::time::timeout_at(deadline, stream.read_buf(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => {}
            // Closed, failed, idle or slow past the timeout: hyper too closes such a one.
            _ => return Next::Close,
        }
        let (head, len, body_len, close) = match parse(&buf) {
            Parse::Partial if buf.len() < MAX_HEAD => continue,
            Parse::Partial | Parse::Elsewhere => return Next::Hyper(buf),
            Parse::Done { head, len, body_len, close } => (head, len, body_len, close),
        };
        // The body, up to its length; bytes past it are a pipelined request: hyper's.
        while buf.len() < len + body_len {
            buf.reserve(len + body_len - buf.len());
            match tokio::time::timeout_at(deadline, stream.read_buf(&mut buf)).await {
                Ok(Ok(n)) if n > 0 => {}
                Ok(_) => return Next::Close,
                // A slow body is no slow head: hyper waits for it as it would have.
                Err(_) => return Next::Hyper(buf),
            }
        }
        if buf.len() > len + body_len {
            return Next::Hyper(buf);
        }
        let body = Bytes::from(buf).slice(len..);
        let mut req = head.map(|()| Body::from(body));
        *req.version_mut() = Version::HTTP_11;
        return Next::Request(req, close);
    }
}

enum Parse {
    Partial,
    Elsewhere,
    Done { head: Request<()>, len: usize, body_len: usize, close: bool },
}

fn parse(buf: &[u8]) -> Parse {
    let mut lines = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut r = httparse::Request::new(&mut lines);
    let len = match r.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Parse::Partial,
        Err(_) => return Parse::Elsewhere,
    };
    let method = match r.method {
        Some("GET") => Method::GET,
        Some("POST") => Method::POST,
        Some("DELETE") => Method::DELETE,
        _ => return Parse::Elsewhere,
    };
    let Some(path) = r.path.filter(|p| p.starts_with('/')) else { return Parse::Elsewhere };
    // The event stream never ends: it is written as it goes, by hyper.
    if r.version != Some(1) || path.split('?').next() == Some("/v1/events") {
        return Parse::Elsewhere;
    }
    let Ok(uri) = path.parse::<Uri>() else { return Parse::Elsewhere };
    let mut headers = HeaderMap::with_capacity(r.headers.len());
    let (mut body_len, mut close) = (None, false);
    for h in r.headers.iter() {
        let (Ok(name), Ok(value)) = (HeaderName::from_bytes(h.name.as_bytes()), HeaderValue::from_bytes(h.value))
        else {
            return Parse::Elsewhere;
        };
        if name == header::CONTENT_LENGTH {
            let n =
                std::str::from_utf8(h.value).ok().filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()));
            match n.and_then(|v| v.parse::<usize>().ok()) {
                Some(n) if body_len.is_none() && n <= MAX_BODY => body_len = Some(n),
                _ => return Parse::Elsewhere,
            }
        } else if name == header::TRANSFER_ENCODING || name == header::EXPECT || name == header::UPGRADE {
            return Parse::Elsewhere;
        } else if name == header::CONNECTION {
            for token in value.to_str().unwrap_or_default().split(',').map(str::trim) {
                if token.eq_ignore_ascii_case("close") {
                    close = true;
                } else if token.eq_ignore_ascii_case("upgrade") {
                    return Parse::Elsewhere;
                }
            }
        }
        headers.append(name, value);
    }
    let mut head = Request::new(());
    *head.method_mut() = method;
    *head.uri_mut() = uri;
    *head.headers_mut() = headers;
    Parse::Done { head, len, body_len: body_len.unwrap_or(0), close }
}

/// Writes `res` whole, with its length and the date; `close` says the connection ends after it.
pub(crate) async fn write_response(stream: &mut TcpStream, res: Response<Body>, close: bool) -> io::Result<()> {
    let (parts, body) = res.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.map_err(io::Error::other)?;
    let status = parts.status;
    let mut head = Vec::with_capacity(256);
    head.extend_from_slice(b"HTTP/1.1 ");
    head.extend_from_slice(status.as_str().as_bytes());
    head.push(b' ');
    head.extend_from_slice(status.canonical_reason().unwrap_or("").as_bytes());
    head.extend_from_slice(b"\r\n");
    for (name, value) in &parts.headers {
        if [header::CONTENT_LENGTH, header::TRANSFER_ENCODING, header::CONNECTION, header::DATE].contains(name) {
            continue;
        }
        head.extend_from_slice(name.as_str().as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    let bodiless = status.is_informational() || status == StatusCode::NO_CONTENT || status == StatusCode::NOT_MODIFIED;
    if !bodiless {
        head.extend_from_slice(format!("content-length: {}\r\n", body.len()).as_bytes());
    }
    if close {
        head.extend_from_slice(b"connection: close\r\n");
    }
    head.extend_from_slice(
        format!("date: {}\r\n\r\n", httpdate::fmt_http_date(std::time::SystemTime::now())).as_bytes(),
    );
    if bodiless {
        stream.write_all(&head).await
    } else {
        // Head and body in one vectored write.
        stream.write_all_buf(&mut bytes::Buf::chain(&head[..], &body[..])).await
    }
}

/// A connection handed to hyper: the bytes already read from it come first.
pub(crate) struct Rewind {
    read: Bytes,
    stream: TcpStream,
}

impl AsyncRead for Rewind {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if !self.read.is_empty() {
            let n = self.read.len().min(buf.remaining());
            let taken = self.read.split_to(n);
            buf.put_slice(&taken);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Rewind {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

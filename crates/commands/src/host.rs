//! Host names as rules compare them, read the way the HTTP client reads a URL's host: lower
//! case, IDNA (Unicode dots such as `。` are dots), no trailing dot, every IPv4 form
//! (`0x7f.1`, `2130706433`) as dotted decimal, and an IPv4-mapped IPv6 address as its IPv4.

/// The host as rules see it; none when it is not a host.
pub fn normalize(host: &str) -> Option<String> {
    let h = host.trim();
    if h.is_empty() || h.contains(['/', '?', '#', '@', ' ']) {
        return None;
    }
    let u = url::Url::parse(&format!("http://{h}/")).ok()?;
    if u.port().is_some() {
        return None;
    }
    of_url(&u)
}

/// A URL's host as rules see it.
pub fn of_url(u: &url::Url) -> Option<String> {
    Some(match u.host()? {
        url::Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            // A trailing dot taken away may leave a name that is an IPv4 address.
            match url::Url::parse(&format!("http://{d}/")).ok().and_then(|v| v.host().map(|h| h.to_owned())) {
                Some(url::Host::Ipv4(ip)) => ip.to_string(),
                _ => d,
            }
        }
        url::Host::Ipv4(ip) => ip.to_string(),
        url::Host::Ipv6(ip) => match ip.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => format!("[{ip}]"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let n = |h: &str| normalize(h);
        assert_eq!(n("Evil.Example.").as_deref(), Some("evil.example"));
        assert_eq!(n("evil\u{3002}example").as_deref(), Some("evil.example"));
        assert_eq!(n("[::ffff:127.0.0.1]").as_deref(), Some("127.0.0.1"));
        assert_eq!(n("0x7f.1").as_deref(), Some("127.0.0.1"));
        assert_eq!(n("2130706433").as_deref(), Some("127.0.0.1"));
        assert_eq!(n("127.0.0.1.").as_deref(), Some("127.0.0.1"));
        assert_eq!(n("bücher.example").as_deref(), Some("xn--bcher-kva.example"));
        assert_eq!(n("[::1]").as_deref(), Some("[::1]"));
        assert_eq!(n("a/b"), None);
        assert_eq!(n(""), None);
    }
}

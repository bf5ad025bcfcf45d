//! Ready conditions (§6.14): after a component deployed (and after the
//! last component, for the stack's own), wait until a URL answers or a
//! name resolves.
//!
//! Each condition: sleep `pauseSeconds`; then `dns` must resolve to an
//! address other than `127.0.0.1`/`1.0.0.1`, and `url` must answer a GET
//! with a status from 100 to 499 (redirects are not followed). Both are
//! tried every [`POLL`] until `waitSeconds` (default 1200) are over. An
//! interrupt ends the wait as a failure.
//!
//! `http://` URLs get a real GET. For `https://` no TLS library is built in:
//! the check is that the host accepts TCP connections on the port (a
//! documented difference from the reference, which does a GET without
//! verifying the certificate).

use crate::child::interrupt::Interrupts;
use hub_manifest::ReadyCondition;
use hub_params::expr::{parse, Piece};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// How often a condition is tried again.
pub(crate) const POLL: Duration = Duration::from_secs(10);
/// `waitSeconds` when not given.
pub(crate) const DEFAULT_WAIT: Duration = Duration::from_secs(1200);
/// How long one connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Waits for every condition in order; the error says which one failed.
pub(crate) fn wait_ready(
    conditions: &[ReadyCondition],
    lookup: &dyn Fn(&str) -> Option<String>,
    interrupts: &Interrupts,
) -> Result<(), String> {
    wait_resolved(&resolve(conditions, lookup)?, interrupts)
}

/// The conditions with their `${...}` references replaced, so that the
/// wait needs nothing but them (it may then run on another thread).
pub fn resolve(
    conditions: &[ReadyCondition],
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<ReadyCondition>, String> {
    conditions
        .iter()
        .map(|condition| {
            let mut resolved = condition.clone();
            if !condition.dns.is_empty() {
                resolved.dns = expand(&condition.dns, lookup)?;
            }
            if !condition.url.is_empty() {
                resolved.url = expand(&condition.url, lookup)?;
            }
            Ok(resolved)
        })
        .collect()
}

/// [`wait_ready`] for conditions already [resolved](resolve).
pub(crate) fn wait_resolved(
    conditions: &[ReadyCondition],
    interrupts: &Interrupts,
) -> Result<(), String> {
    for condition in conditions {
        if condition.pause_seconds > 0 && interrupts.sleep(seconds(condition.pause_seconds)) {
            return Err("interrupted while waiting for a ready condition".into());
        }
        let wait = match condition.wait_seconds {
            n if n > 0 => seconds(n),
            _ => DEFAULT_WAIT,
        };
        if !condition.dns.is_empty() {
            let name = &condition.dns;
            poll(&format!("name `{name}`"), wait, interrupts, || {
                resolves(name)
            })?;
        }
        if !condition.url.is_empty() {
            let url = &condition.url;
            let target = Url::parse(url)?;
            poll(&format!("`{url}`"), wait, interrupts, || target.answers())?;
        }
    }
    Ok(())
}

fn seconds(n: i64) -> Duration {
    Duration::from_secs(n.max(0) as u64)
}

/// `${name}` references replaced by their values; an unknown one fails.
fn expand(template: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::new();
    for piece in parse(template) {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Reference(name) => match lookup(name) {
                Some(value) => out.push_str(&value),
                None => {
                    return Err(format!(
                    "ready condition `{template}`: `{name}` is neither a parameter nor an output"
                ))
                }
            },
            Piece::Cel(source) => {
                return Err(format!(
                    "ready condition `{template}`: `#{{{source}}}` is not supported here"
                ))
            }
        }
    }
    Ok(out)
}

/// Tries `check` now and every [`POLL`] until `wait` is over.
fn poll(
    what: &str,
    wait: Duration,
    interrupts: &Interrupts,
    mut check: impl FnMut() -> Result<(), String>,
) -> Result<(), String> {
    let deadline = Instant::now() + wait;
    loop {
        let last = match check() {
            Ok(()) => return Ok(()),
            Err(reason) => reason,
        };
        let now = Instant::now();
        if now >= deadline {
            return Err(format!(
                "{what} was not ready after {}s: {last}",
                wait.as_secs()
            ));
        }
        if interrupts.sleep(POLL.min(deadline - now)) {
            return Err(format!("interrupted while waiting for {what}"));
        }
    }
}

/// The name resolves to a routable-looking address.
fn resolves(name: &str) -> Result<(), String> {
    let host = name.rsplit_once(':').map_or(name, |(host, port)| {
        if port.chars().all(|c| c.is_ascii_digit()) {
            host
        } else {
            name
        }
    });
    let first = (host, 0)
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .next()
        .ok_or_else(|| "no address".to_string())?;
    let address = first.ip().to_string();
    if address.len() < 7 || address == "127.0.0.1" || address == "1.0.0.1" {
        return Err(format!("resolves to {address}"));
    }
    Ok(())
}

/// An `http://` or `https://` URL, split.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Url {
    secure: bool,
    host: String,
    port: u16,
    path: String,
}

impl Url {
    fn parse(url: &str) -> Result<Url, String> {
        let (secure, rest) = if let Some(rest) = url.strip_prefix("http://") {
            (false, rest)
        } else if let Some(rest) = url.strip_prefix("https://") {
            (true, rest)
        } else {
            return Err(format!(
                "ready condition URL `{url}` must start with http:// or https://"
            ));
        };
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, "/"),
        };
        let default_port = if secure { 443 } else { 80 };
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') || authority.starts_with('[') => {
                let port = port
                    .parse()
                    .map_err(|_| format!("ready condition URL `{url}` has an invalid port"))?;
                (host, port)
            }
            _ => (authority, default_port),
        };
        if host.is_empty() {
            return Err(format!("ready condition URL `{url}` has no host"));
        }
        Ok(Url {
            secure,
            host: host.trim_matches(['[', ']']).to_string(),
            port,
            path: path.to_string(),
        })
    }

    fn connect(&self) -> Result<TcpStream, String> {
        let addresses: Vec<SocketAddr> = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|e| format!("{}: {e}", self.host))?
            .collect();
        let mut last = format!("{}: no address", self.host);
        for address in addresses {
            match TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) {
                Ok(stream) => return Ok(stream),
                Err(e) => last = format!("{address}: {e}"),
            }
        }
        Err(last)
    }

    /// A GET answered with a status below 500 (`https`: a TCP connection).
    fn answers(&self) -> Result<(), String> {
        let mut stream = self.connect()?;
        if self.secure {
            return Ok(());
        }
        let _ = stream.set_read_timeout(Some(CONNECT_TIMEOUT));
        let request = format!(
            "GET {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nUser-Agent: hub\r\n\r\n",
            self.path, self.host
        );
        stream
            .write_all(request.as_bytes())
            .map_err(|e| e.to_string())?;
        let head = status_line(&mut stream).map_err(|e| e.to_string())?;
        let status = status_of(&head).ok_or_else(|| "no HTTP status line".to_string())?;
        if (100..500).contains(&status) {
            Ok(())
        } else {
            Err(format!("HTTP status {status}"))
        }
    }
}

/// The bytes up to the end of the first line (at most 64): a server may
/// send its status line in several pieces.
fn status_line(stream: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(64);
    let mut chunk = [0u8; 64];
    while head.len() < 64 && !head.contains(&b'\n') {
        let read = stream.read(&mut chunk[..64 - head.len()])?;
        if read == 0 {
            break;
        }
        head.extend_from_slice(&chunk[..read]);
    }
    Ok(head)
}

/// The status code of `HTTP/1.x NNN ...`.
fn status_of(head: &[u8]) -> Option<u16> {
    let text = std::str::from_utf8(head).ok()?;
    let mut words = text.split_whitespace();
    words.next().filter(|w| w.starts_with("HTTP/"))?;
    words.next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out its bytes a few at a time, as a slow server would.
    struct Trickle(Vec<u8>);

    impl Read for Trickle {
        fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
            let n = buffer.len().min(self.0.len()).min(4);
            buffer[..n].copy_from_slice(&self.0[..n]);
            self.0.drain(..n);
            Ok(n)
        }
    }

    #[test]
    fn a_status_line_sent_in_pieces_is_read_whole() {
        let mut server = Trickle(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec());
        let head = status_line(&mut server).unwrap();
        assert_eq!(status_of(&head), Some(404));
    }
    use std::net::TcpListener;

    fn serve(status: u16) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten().take(8) {
                let mut stream = stream;
                let mut buffer = [0u8; 512];
                let _ = stream.read(&mut buffer);
                let _ = write!(stream, "HTTP/1.1 {status} X\r\nContent-Length: 0\r\n\r\n");
            }
        });
        port
    }

    fn condition(url: String, wait: i64) -> ReadyCondition {
        ReadyCondition {
            url,
            wait_seconds: wait,
            ..ReadyCondition::default()
        }
    }

    #[test]
    fn any_status_below_500_is_ready() {
        let port = serve(404);
        let lookup = |name: &str| (name == "port").then(|| port.to_string());
        let conditions = [condition("http://127.0.0.1:${port}/health".into(), 2)];
        assert_eq!(
            wait_ready(&conditions, &lookup, &Interrupts::unwatched()),
            Ok(())
        );
    }

    #[test]
    fn a_server_error_is_not_ready_until_the_wait_is_over() {
        let port = serve(503);
        let started = Instant::now();
        let conditions = [condition(format!("http://127.0.0.1:{port}/"), 1)];
        let error = wait_ready(&conditions, &|_| None, &Interrupts::unwatched()).unwrap_err();
        assert!(error.contains("503"), "{error}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn other_schemes_and_unknown_names_fail_at_once() {
        let interrupts = Interrupts::unwatched();
        let error =
            wait_ready(&[condition("ftp://x".into(), 60)], &|_| None, &interrupts).unwrap_err();
        assert!(error.contains("http://"), "{error}");
        let error = wait_ready(
            &[condition("http://${nope}/".into(), 60)],
            &|_| None,
            &interrupts,
        )
        .unwrap_err();
        assert!(error.contains("nope"), "{error}");
    }

    #[test]
    fn an_interrupt_ends_the_wait() {
        let interrupts = Interrupts::unwatched();
        interrupts.trigger(libc::SIGINT);
        let conditions = [ReadyCondition {
            pause_seconds: 60,
            ..ReadyCondition::default()
        }];
        let error = wait_ready(&conditions, &|_| None, &interrupts).unwrap_err();
        assert!(error.contains("interrupted"), "{error}");
    }

    #[test]
    fn urls_are_split() {
        assert_eq!(
            Url::parse("https://api.example.com/healthz").unwrap(),
            Url {
                secure: true,
                host: "api.example.com".into(),
                port: 443,
                path: "/healthz".into()
            }
        );
        assert_eq!(Url::parse("http://h:8080").unwrap().port, 8080);
        assert!(Url::parse("http://h:x/").is_err());
        assert_eq!(status_of(b"HTTP/1.1 204 No Content\r\n"), Some(204));
    }
}

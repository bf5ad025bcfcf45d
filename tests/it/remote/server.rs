//! The local S3-compatible server of the remote-state tests: moto's S3
//! app (`s3_server.py` beside this file), one per test binary, on a free
//! port of 127.0.0.1. Each test takes its own bucket.
//!
//! Without the server (moto not installed) a test prints why and is
//! skipped; under `CI=true` it fails instead.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

pub const ACCESS_KEY: &str = "hubtestaccess";
pub const SECRET_KEY: &str = "hub-test-secret-Zq81xT";
pub const REGION: &str = "us-east-1";

pub struct Server {
    pub port: u16,
    pub access_key: String,
    pub secret_key: String,
    /// Holds `requests.log` and the `fail.BUCKET` switches.
    pub dir: PathBuf,
    _child: Mutex<(Child, ChildStdin)>,
    _dir: tempfile::TempDir,
}

/// The server of this test binary; `None` (the test returns) when it
/// cannot be started outside CI. It checks no signature.
pub fn server() -> Option<&'static Server> {
    static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();
    required(SERVER.get_or_init(|| start(None)))
}

/// The bucket every request to this server must be signed for.
pub const SIGNED_BUCKET: &str = "hub-signed";

/// A second server, which refuses every request not signed with its own
/// keys (`access_key`, `secret_key`); it holds [`SIGNED_BUCKET`].
pub fn signing_server() -> Option<&'static Server> {
    static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();
    required(SERVER.get_or_init(|| start(Some(SIGNED_BUCKET))))
}

/// A store the tests run hub against: the variables that point hub at it.
pub trait Store {
    fn env(&self) -> Vec<(&'static str, String)>;
}

impl Store for Server {
    fn env(&self) -> Vec<(&'static str, String)> {
        let mut env = Server::env(self);
        env.push(("S3_SWITCHES", self.dir.display().to_string()));
        env
    }
}

/// The server started, or `None` (the test returns) when it could not be
/// outside CI.
pub fn required<T>(started: &'static Result<T, String>) -> Option<&'static T> {
    match started {
        Ok(server) => Some(server),
        Err(why) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("the test server is required under CI=true: {why}")
        }
        Err(why) => {
            crate::common::skipped(why);
            None
        }
    }
}

fn start(signed_bucket: Option<&str>) -> Result<Server, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/remote/s3_server.py");
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut command = Command::new("python3");
    command.arg(&script).arg(dir.path());
    if let Some(bucket) = signed_bucket {
        command.arg("--signed").arg(bucket);
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("no S3 test server: cannot run python3: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    let port = lines
        .next()
        .and_then(|line| line.strip_prefix("port ")?.parse().ok());
    let keys = match signed_bucket {
        None => Some((ACCESS_KEY.to_string(), SECRET_KEY.to_string())),
        Some(_) => lines.next().and_then(|line| {
            let (access, secret) = line.strip_prefix("keys ")?.split_once(' ')?;
            Some((access.to_string(), secret.to_string()))
        }),
    };
    let (Some(port), Some((access_key, secret_key))) = (port, keys) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(
            "moto's S3 server did not start (install it with `pip install moto[server]`)".into(),
        );
    };
    let stdin = child.stdin.take().ok_or("no stdin")?;
    Ok(Server {
        port,
        access_key,
        secret_key,
        dir: dir.path().to_path_buf(),
        _child: Mutex::new((child, stdin)),
        _dir: dir,
    })
}

/// Sends one request (`head`: the request line and headers, without the
/// blank line that ends them) to 127.0.0.1:`port` and reads the answer.
pub fn exchange(port: u16, mut head: String, body: &[u8]) -> Response {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("send");
    stream.write_all(body).expect("send body");
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).expect("read answer");
    // Sealed objects are binary: their text is only looked at.
    let answer = String::from_utf8_lossy(&bytes);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Response {
        status,
        headers,
        body: body.to_string(),
    }
}

/// The answer to a raw request: status and headers (names lower-cased).
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

impl Server {
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// A new, empty bucket for one test.
    pub fn bucket(&self, name: &str) -> String {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let bucket = format!("{name}-{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let created = self.request("PUT", &format!("/{bucket}"), &[], b"");
        assert_eq!(
            created.status, 200,
            "create bucket {bucket}: {}",
            created.body
        );
        bucket
    }

    /// One plain HTTP request. [`server`] checks no signature, but wants
    /// an `Authorization` header to apply conditions as S3 does;
    /// [`signing_server`] refuses it (its signature is wrong).
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Response {
        let mut head = format!(
            "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{}\r\nContent-Length: {}\r\nConnection: close\r\nContent-Type: application/octet-stream\r\nAuthorization: AWS4-HMAC-SHA256 Credential={}/20260101/{REGION}/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=00\r\nX-Amz-Date: 20260101T000000Z\r\n",
            self.port,
            body.len(),
            self.access_key,
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        exchange(self.port, head, body)
    }

    /// The object's content; `None` when missing.
    pub fn get(&self, bucket: &str, key: &str) -> Option<String> {
        let response = self.request("GET", &format!("/{bucket}/{key}"), &[], b"");
        (response.status == 200).then_some(response.body)
    }

    /// Every request to `bucket` fails (503) while `down`.
    pub fn set_down(&self, bucket: &str, down: bool) {
        let switch = self.dir.join(format!("fail.{bucket}"));
        match down {
            true => std::fs::write(switch, b"").expect("switch"),
            false => std::fs::remove_file(switch).expect("switch"),
        }
    }

    /// The PUT requests to `bucket` logged so far.
    pub fn puts(&self, bucket: &str) -> usize {
        let log = std::fs::read_to_string(self.dir.join("requests.log")).unwrap_or_default();
        let prefix = format!("PUT /{bucket}/");
        log.lines().filter(|l| l.starts_with(&prefix)).count()
    }

    /// The variables that point hub at this server.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", self.endpoint()),
            ("AWS_ACCESS_KEY_ID", self.access_key.clone()),
            ("AWS_SECRET_ACCESS_KEY", self.secret_key.clone()),
            ("AWS_REGION", REGION.into()),
        ]
    }
}

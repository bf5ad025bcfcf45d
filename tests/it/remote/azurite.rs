//! Azurite, the Azure Blob Storage emulator (npm package `azurite`), for
//! the `az://` tests: one per test binary, started by `azure_server.py`
//! beside this file on a free port of 127.0.0.1. It checks every request's
//! Shared Key signature, so the raw requests below are signed as Azure
//! wants. Each test takes its own container.
//!
//! Azurite is looked for at `$HUB_AZURITE_BLOB`, then where `.ci/run`
//! installs it (`target/test-tools/azurite`), then on `PATH`. Without it a
//! test prints why and is skipped; under `CI=true` it fails instead.

use super::server::{exchange, required, Response, Store};
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// The emulator's well-known account and key (public, the same for every
/// Azurite).
const ACCOUNT: &str = "devstoreaccount1";
const KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const API_VERSION: &str = "2023-11-03";

pub struct Azurite {
    pub port: u16,
    _child: Mutex<(Child, ChildStdin)>,
}

/// The Azurite of this test binary; `None` (the test returns) when it
/// cannot be started outside CI.
pub fn azurite() -> Option<&'static Azurite> {
    static SERVER: OnceLock<Result<Azurite, String>> = OnceLock::new();
    required(SERVER.get_or_init(start))
}

fn binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("HUB_AZURITE_BLOB") {
        return Some(PathBuf::from(path));
    }
    let installed = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/test-tools/azurite/node_modules/.bin/azurite-blob");
    if installed.exists() {
        return Some(installed);
    }
    which::which("azurite-blob").ok()
}

fn start() -> Result<Azurite, String> {
    let hint = "install it with `npm install --prefix target/test-tools/azurite azurite`";
    let blob = binary().ok_or_else(|| format!("no Azurite ({hint})"))?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/remote/azure_server.py");
    let mut child = Command::new("python3")
        .arg(&script)
        .arg(&blob)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("no Azurite: cannot run python3: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let port = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .next()
        .and_then(|line| line.strip_prefix("port ")?.parse().ok());
    let Some(port) = port else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!(
            "Azurite at {} did not start ({hint})",
            blob.display()
        ));
    };
    let stdin = child.stdin.take().ok_or("no stdin")?;
    Ok(Azurite {
        port,
        _child: Mutex::new((child, stdin)),
    })
}

impl Azurite {
    /// A new, empty container for one test.
    pub fn container(&self, name: &str) -> String {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let container = format!("{name}-{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let created = self.request("PUT", &container, &[("restype", "container")], &[], b"");
        assert_eq!(
            created.status, 201,
            "create container {container}: {}",
            created.body
        );
        container
    }

    /// One request signed with the account's key (Shared Key). `path`:
    /// `CONTAINER` or `CONTAINER/BLOB`.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        query: &[(&str, &str)],
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Response {
        let date = jiff::Timestamp::now()
            .strftime("%a, %d %b %Y %H:%M:%S GMT")
            .to_string();
        let mut ms_headers: Vec<(String, String)> = vec![
            ("x-ms-date".into(), date),
            ("x-ms-version".into(), API_VERSION.into()),
        ];
        if method == "PUT" && path.contains('/') {
            ms_headers.push(("x-ms-blob-type".into(), "BlockBlob".into()));
        }
        let standard = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map_or("", |(_, v)| *v)
        };
        let length = match body.len() {
            0 => String::new(),
            n => n.to_string(),
        };
        let mut to_sign = format!(
            "{method}\n\n\n{length}\n\n\n\n\n{}\n{}\n\n\n",
            standard("If-Match"),
            standard("If-None-Match")
        );
        ms_headers.sort();
        for (name, value) in &ms_headers {
            to_sign.push_str(&format!("{name}:{value}\n"));
        }
        to_sign.push_str(&format!("/{ACCOUNT}/{ACCOUNT}/{path}"));
        let mut sorted_query = query.to_vec();
        sorted_query.sort();
        for (name, value) in &sorted_query {
            to_sign.push_str(&format!("\n{name}:{value}"));
        }
        let key = base64::engine::general_purpose::STANDARD
            .decode(KEY)
            .expect("the emulator's key");
        let mut mac = Hmac::<Sha256>::new_from_slice(&key).expect("an HMAC key");
        mac.update(to_sign.as_bytes());
        let signature =
            base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
        let query_string: Vec<String> = query.iter().map(|(n, v)| format!("{n}={v}")).collect();
        let target = match query_string.is_empty() {
            true => format!("/{ACCOUNT}/{path}"),
            false => format!("/{ACCOUNT}/{path}?{}", query_string.join("&")),
        };
        let mut head = format!(
            "{method} {target} HTTP/1.0\r\nHost: 127.0.0.1:{}\r\nContent-Length: {}\r\nConnection: close\r\nAuthorization: SharedKey {ACCOUNT}:{signature}\r\n",
            self.port,
            body.len()
        );
        for (name, value) in ms_headers.iter().map(|(n, v)| (n.as_str(), v.as_str())) {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        exchange(self.port, head, body)
    }

    /// The blob's content; `None` when missing.
    pub fn get(&self, container: &str, blob: &str) -> Option<String> {
        let response = self.request("GET", &format!("{container}/{blob}"), &[], &[], b"");
        (response.status == 200).then_some(response.body)
    }
}

impl Store for Azurite {
    /// The variables that point hub at this emulator.
    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AZURE_STORAGE_USE_EMULATOR", "true".into()),
            (
                "AZURITE_BLOB_STORAGE_URL",
                format!("http://127.0.0.1:{}", self.port),
            ),
        ]
    }
}

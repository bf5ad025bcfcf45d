//! `hub deploy` of 100 components that print one line (the stack of the
//! `deploy` bench) with the state on the local S3
//! test server (moto, `tests/it/remote/s3_server.py`) and in a local file,
//! in the same run: the extra time per component a remote state costs, and
//! the PUT requests a run makes (counted from the server's request log).
//!
//! Run with `cargo bench --bench remote` (needs `moto[server]`).
//! Options (after `--`): `--components N` (default 100), `--runs N`
//! (timed runs per location, default 3).

mod stacks;

use stacks::write_stack;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn option(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Server {
    port: u16,
    log: PathBuf,
    _child: std::process::Child,
}

fn start_server(dir: &Path) -> Server {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/remote/s3_server.py");
    let mut child = Command::new("python3")
        .arg(script)
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("port line");
    let port = line
        .trim()
        .strip_prefix("port ")
        .and_then(|p| p.parse().ok())
        .expect("moto's S3 server did not start: pip install 'moto[server]'");
    let mut bucket = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    write!(
        bucket,
        "PUT /bench HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"
    )
    .expect("create bucket");
    let mut answer = String::new();
    let _ = bucket.read_to_string(&mut answer);
    assert!(answer.contains(" 200 "), "create bucket: {answer}");
    Server {
        port,
        log: dir.join("requests.log"),
        _child: child,
    }
}

fn deploy(root: &Path, server: &Server, location: &str) -> Duration {
    let start = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_hub"))
        .current_dir(root)
        .args(["deploy", "hub.yaml.elaborate", "-s", location])
        .env(
            "AWS_ENDPOINT_URL",
            format!("http://127.0.0.1:{}", server.port),
        )
        .env("AWS_ACCESS_KEY_ID", "bench")
        .env("AWS_SECRET_ACCESS_KEY", "bench-secret")
        .env("AWS_REGION", "us-east-1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run hub");
    assert!(status.success(), "deploy -s {location} failed");
    start.elapsed()
}

fn puts_to(server: &Server, key: &str) -> usize {
    let log = std::fs::read_to_string(&server.log).unwrap_or_default();
    let prefix = format!("PUT /bench/{key}");
    log.lines().filter(|l| l.starts_with(&prefix)).count()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let components = option("--components", 100);
    let runs = option("--runs", 3).max(1);
    let dir = tempfile::tempdir().expect("temporary folder");
    let server = start_server(dir.path());
    let root = dir.path().join("stack");
    write_stack(&root, components);
    let (mut local, mut remote, mut puts) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..runs {
        let file = format!("run{run}.state");
        local.push(deploy(&root, &server, &file));
        let key = format!("run{run}/hub.state");
        remote.push(deploy(&root, &server, &format!("s3://bench/{key}")));
        puts.push(puts_to(&server, &key));
    }
    let (local, remote) = (median(local), median(remote));
    let extra = remote.saturating_sub(local).as_secs_f64() * 1000.0 / components as f64;
    println!("| Components | Local file (median of {runs}) | Local S3 server | Extra per component | PUTs per run |");
    println!("|---|---|---|---|---|");
    println!(
        "| {components} | {:.2} s | {:.2} s | {extra:.1} ms | {} |",
        local.as_secs_f64(),
        remote.as_secs_f64(),
        puts.iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
}

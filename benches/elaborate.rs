//! `hub elaborate` on generated stacks of 100 and 1000 components, next to
//! the time it takes merely to read and parse the same files with the YAML
//! crate, measured in the same run.
//!
//! Run with `cargo bench --bench elaborate`. Options (after `--`):
//! `--sizes 100,1000`, `--runs N` (timed runs per size; default 15 for
//! stacks up to 300 components, 7 above), and `--write DIR`, which only
//! writes the stacks to `DIR/<size>/` (for profiling) and exits. Profile
//! `target/profiling/hub` on them (`cargo build --profile profiling`: the
//! release build with line tables, which the release binary no longer has).
//!
//! The generated stack: N component instances in `depends` chains of ten,
//! every tenth sharing the source folder of the one before; each component
//! manifest declares 20 parameters (plain values, `kind: user` with and
//! without defaults, nested groups, `env` mappings, a link to the upstream
//! component's output), 3 outputs, requires and provides; `hub.yaml` lists
//! the components with `lifecycle.order` and ~50 stack parameters; and
//! `params.yaml` overrides about a fifth of the components' user parameters.
//!
//! Each run times, one after the other:
//! - the parse floor: read every distinct file of the stack and parse it
//!   into `yaml_serde::Value`;
//! - the typed parse: the same files decoded into `hub_manifest` types;
//! - the library: `hub_elaborate::elaborate` followed by
//!   `hub_manifest::render_elaborated`;
//! - the binary: `hub elaborate hub.yaml params.yaml -o -`, stdout and
//!   stderr discarded, wall time including process start.
//!
//! The target is elaborate ≤ 2× the parse floor, growing linearly.

use hub_elaborate::{elaborate, Options};
use hub_manifest::diag::Warnings;
use hub_manifest::{render_elaborated, Manifest, ParamsFile};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every tenth instance reuses the source folder of the previous one.
fn shares_source(i: usize) -> bool {
    i % 10 == 9
}

/// The component folder an instance is read from.
fn source_of(i: usize) -> usize {
    if shares_source(i) {
        i - 1
    } else {
        i
    }
}

/// Components form `depends` chains of ten.
fn depends_on(i: usize) -> Option<usize> {
    (i % 10 != 0).then(|| i - 1)
}

fn component_yaml(i: usize) -> String {
    let mut requires = String::from("- kubernetes\n- helm\n");
    if let Some(d) = depends_on(i) {
        let _ = writeln!(requires, "- cap-{d:04}");
    }
    let link = match depends_on(i) {
        Some(d) => format!(
            "- name: component.svc{d:04}.endpoint\n  value: ${{component.svc{d:04}.endpoint}}\n  env: UPSTREAM_ENDPOINT\n"
        ),
        None => "- name: component.upstream.endpoint\n  empty: allow\n  env: UPSTREAM_ENDPOINT\n".to_string(),
    };
    format!(
        r#"---
version: 1
kind: component
meta:
  name: svc{i:04}
  title: Service {i}
  brief: Generated service number {i}
  description: A service with a chart, an ingress and some storage.
  version: 1.2.{i}
  maturity: beta
  license: Apache 2.0
  source:
    dir: components/svc{i:04}

requires:
{requires}
provides:
- cap-{i:04}

lifecycle:
  verbs:
  - deploy
  - undeploy

parameters:
- name: cloud.region
  kind: user
  env: AWS_REGION
- name: dns.domain
  kind: user
  env: DOMAIN_NAME
- name: dns.name
  kind: user
  default: cluster
  env: CLUSTER_NAME
- name: terraform.bucket.name
  kind: user
  env: STATE_BUCKET
- name: component.svc{i:04}
  parameters:
  - name: namespace
    value: ns-{i:04}
    env: NAMESPACE
  - name: name
    value: svc{i:04}
    env: COMPONENT_NAME
  - name: replicas
    kind: user
    default: 2
    env: REPLICAS
  - name: image
    kind: user
    parameters:
    - name: repository
      default: registry.example.com/team/svc{i:04}
      env: IMAGE_REPOSITORY
    - name: tag
      env: IMAGE_TAG
  - name: chart
    parameters:
    - name: name
      value: charts/svc{i:04}
      env: CHART_NAME
    - name: version
      value: 1.0.{i}
      env: CHART_VERSION
  - name: ingress
    kind: user
    parameters:
    - name: enabled
      default: true
      env: INGRESS_ENABLED
    - name: host
      env: INGRESS_HOST
    - name: tls
      empty: allow
      env: INGRESS_TLS
  - name: resources
    parameters:
    - name: cpu
      value: 100m
      env: CPU_REQUEST
    - name: memory
      value: 128Mi
      env: MEMORY_REQUEST
  - name: storage.size
    kind: user
    default: 1Gi
    env: STORAGE_SIZE
  - name: storage.class
    empty: allow
    env: STORAGE_CLASS
  - name: debug
    value: false
    env: DEBUG
{link}
outputs:
- name: component.svc{i:04}.endpoint
  brief: Service endpoint
  fromTfVar: endpoint
- name: component.svc{i:04}.password
  fromTfVar: admin_password
- name: component.svc{i:04}.url
  value: https://${{component.svc{i:04}.ingress.host}}
"#
    )
}

fn stack_yaml(n: usize) -> String {
    let mut s = String::from(
        "version: 1\nkind: stack\nmeta:\n  name: generated\n  brief: A generated stack for the elaborate benchmark\n  annotations:\n    purpose: benchmark\n\ncomponents:\n",
    );
    for i in 0..n {
        let _ = write!(
            s,
            "  - name: svc{i:04}\n    source:\n      dir: components/svc{:04}\n",
            source_of(i)
        );
        if let Some(d) = depends_on(i) {
            let _ = write!(s, "    depends:\n      - svc{d:04}\n");
        }
    }
    s.push_str("\nrequires:\n  - aws\n  - kubernetes\n\nlifecycle:\n  verbs:\n    - deploy\n    - undeploy\n  order:\n");
    for i in 0..n {
        let _ = writeln!(s, "    - svc{i:04}");
    }
    s.push_str("  mandatory:\n");
    for i in (0..n).step_by(10) {
        let _ = writeln!(s, "    - svc{i:04}");
    }
    s.push_str(
        r#"
parameters:
  - name: cloud
    brief: Cloud
    kind: user
    parameters:
      - name: kind
        value: aws
      - name: region
        fromEnv: AWS_REGION
        default: us-east-2
      - name: availabilityZone
        value: ${cloud.region}a
      - name: sshKey
        brief: SSH key name
        fromEnv: SSH_KEY
  - name: dns
    brief: DNS
    kind: user
    parameters:
      - name: name
        fromEnv: PLATFORM_NAME
      - name: baseDomain
        fromEnv: BASE_DOMAIN
        default: example.com
      - name: domain
        value: ${dns.name}.${dns.baseDomain}
  - name: terraform.bucket
    parameters:
      - name: name
        fromEnv: STATE_BUCKET
      - name: region
        fromEnv: STATE_REGION
"#,
    );
    // 37 platform settings: values, user parameters with defaults, secrets.
    for k in 0..37 {
        let _ = writeln!(s, "  - name: platform.setting{k:02}");
        match k % 3 {
            0 => {
                let _ = writeln!(s, "    value: value-{k}");
            }
            1 => {
                let _ = write!(s, "    kind: user\n    default: default-{k}\n");
            }
            _ => {
                let _ = write!(s, "    kind: user\n    fromEnv: SETTING_{k}\n");
            }
        }
    }
    // Component-qualified stack parameters.
    for i in (0..n).step_by((n / 4).max(1)) {
        let _ = write!(
            s,
            "  - name: component.svc{i:04}.replicas\n    component: svc{i:04}\n    value: 3\n"
        );
    }
    s.push_str("\noutputs:\n");
    for i in (0..n).step_by((n / 8).max(1)) {
        let _ = write!(
            s,
            "  - name: component.svc{i:04}.endpoint\n    brief: Endpoint of svc{i:04}\n"
        );
    }
    s.push_str("  - name: dns.domain\n");
    s
}

/// Overrides about a fifth of the components' user parameters.
fn params_yaml(n: usize) -> String {
    let mut s = String::from("parameters:\n  - name: cloud.region\n    value: eu-west-1\n  - name: dns.name\n    value: bench\n");
    for i in 0..n {
        let _ = write!(
            s,
            "  - name: component.svc{i:04}.image.tag\n    value: v1.{i}\n"
        );
        if i % 2 == 0 {
            let _ = write!(s, "  - name: component.svc{i:04}.ingress.host\n    value: svc{i:04}.bench.example.com\n");
        }
        if i % 5 == 0 {
            let _ = write!(
                s,
                "  - name: dns.name\n    component: svc{i:04}\n    value: svc{i:04}\n"
            );
        }
    }
    s.push_str("outputs:\n  - name: dns.domain\n    brief: The stack's domain\n");
    s
}

/// A generated stack: its folder, and every distinct file elaborate reads.
struct Stack {
    /// Removed when the stack is dropped; `None` for `--write`.
    _dir: Option<tempfile::TempDir>,
    root: PathBuf,
    files: Vec<PathBuf>,
    bytes: usize,
}

fn generate(n: usize) -> Stack {
    let dir = tempfile::Builder::new()
        .prefix("hub-bench-")
        .tempdir()
        .expect("temporary folder");
    let root = dir.path().to_path_buf();
    write_stack(n, Some(dir), root)
}

fn write_stack(n: usize, dir: Option<tempfile::TempDir>, root: PathBuf) -> Stack {
    let mut files = Vec::new();
    let mut bytes = 0;
    let mut write = |path: PathBuf, text: String| {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        bytes += text.len();
        std::fs::write(&path, text).expect("write");
        files.push(path);
    };
    write(root.join("hub.yaml"), stack_yaml(n));
    write(root.join("params.yaml"), params_yaml(n));
    for i in (0..n).filter(|&i| !shares_source(i)) {
        write(
            root.join(format!("components/svc{i:04}/hub-component.yaml")),
            component_yaml(i),
        );
    }
    Stack {
        _dir: dir,
        root,
        files,
        bytes,
    }
}

fn parse_floor(stack: &Stack) -> usize {
    let mut count = 0;
    for path in &stack.files {
        let text = std::fs::read_to_string(path).expect("read");
        let value: yaml_serde::Value = yaml_serde::from_str(&text).expect("parse");
        count += usize::from(!value.is_null());
    }
    count
}

fn typed_parse(stack: &Stack) -> usize {
    let mut count = 0;
    for path in &stack.files {
        let text = std::fs::read_to_string(path).expect("read");
        if path.ends_with("params.yaml") {
            let doc: ParamsFile = yaml_serde::from_str(&text).expect("parse");
            count += doc.parameters.len();
        } else {
            let doc: Manifest = yaml_serde::from_str(&text).expect("parse");
            count += doc.parameters.len();
        }
    }
    count
}

fn options(stack: &Stack) -> Options {
    Options {
        stack: stack.root.join("hub.yaml"),
        params: vec![stack.root.join("params.yaml")],
        ..Options::default()
    }
}

/// What one library run produced, and how long rendering took.
struct Produced {
    components: usize,
    warnings: usize,
    bytes: usize,
    render: Duration,
}

/// Elaborates and renders to a string.
fn library(options: &Options) -> Produced {
    let mut warnings = Warnings::default();
    let elaborated = elaborate(options, &mut warnings).expect("elaborate");
    let start = Instant::now();
    let text = render_elaborated(&elaborated).expect("render");
    let render = start.elapsed();
    Produced {
        components: elaborated.components.len(),
        warnings: warnings.len(),
        bytes: text.len(),
        render,
    }
}

fn binary(stack: &Stack) {
    let status = Command::new(env!("CARGO_BIN_EXE_hub"))
        .current_dir(&stack.root)
        .args(["elaborate", "hub.yaml", "params.yaml", "-o", "-"])
        .env_remove("ENV")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run hub");
    assert!(status.success(), "hub elaborate failed: {status}");
}

/// CPU time used so far by this process (all its threads) and by the
/// children it waited for, from `/proc/self/stat` (Linux; 10 ms ticks).
fn cpu_times() -> (Duration, Duration) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<i64> = stat
        .rsplit_once(')')
        .map(|(_, rest)| {
            rest.split_whitespace()
                .filter_map(|f| f.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    // After the command name: state is not numeric, so utime, stime,
    // cutime and cstime are the 11th to 14th numbers.
    let tick = |i: usize| Duration::from_millis(fields.get(i).map_or(0, |&t| t.max(0) as u64) * 10);
    (tick(10) + tick(11), tick(12) + tick(13))
}

fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

#[derive(Default)]
struct Samples(Vec<Duration>);

impl Samples {
    fn median(&self) -> Duration {
        let mut v = self.0.clone();
        v.sort();
        v[v.len() / 2]
    }
    fn min(&self) -> Duration {
        self.0.iter().copied().min().unwrap_or_default()
    }
}

struct Measured {
    n: usize,
    files: usize,
    bytes: usize,
    output_bytes: usize,
    warnings: usize,
    floor: Samples,
    typed: Samples,
    library: Samples,
    render: Samples,
    binary: Samples,
    /// Mean CPU time per run, all threads.
    library_cpu: Duration,
    binary_cpu: Duration,
}

fn run(n: usize, runs: usize) -> Measured {
    let stack = generate(n);
    let options = options(&stack);
    // Warm-up: page cache, allocator, and a check that the stack elaborates.
    parse_floor(&stack);
    typed_parse(&stack);
    let produced = library(&options);
    assert_eq!(produced.components, n, "every instance has a document");
    binary(&stack);
    let mut r = Measured {
        n,
        files: stack.files.len(),
        bytes: stack.bytes,
        output_bytes: produced.bytes,
        warnings: produced.warnings,
        floor: Samples::default(),
        typed: Samples::default(),
        library: Samples::default(),
        render: Samples::default(),
        binary: Samples::default(),
        library_cpu: Duration::ZERO,
        binary_cpu: Duration::ZERO,
    };
    for _ in 0..runs {
        r.floor.0.push(time(|| {
            std::hint::black_box(parse_floor(&stack));
        }));
        r.typed.0.push(time(|| {
            std::hint::black_box(typed_parse(&stack));
        }));
        let mut render = Duration::ZERO;
        let (own, _) = cpu_times();
        r.library.0.push(time(|| {
            render = std::hint::black_box(library(&options)).render;
        }));
        r.library_cpu += cpu_times().0 - own;
        r.render.0.push(render);
        let (_, children) = cpu_times();
        r.binary.0.push(time(|| binary(&stack)));
        r.binary_cpu += cpu_times().1 - children;
    }
    r.library_cpu /= runs as u32;
    r.binary_cpu /= runs as u32;
    r
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

fn main() {
    let mut sizes = vec![100, 1000];
    let mut runs = None;
    let mut write_to = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--sizes" => {
                sizes = args
                    .next()
                    .expect("--sizes LIST")
                    .split(',')
                    .map(|s| s.parse().expect("a number of components"))
                    .collect();
            }
            "--write" => write_to = Some(PathBuf::from(args.next().expect("--write DIR"))),
            "--runs" => {
                runs = Some(
                    args.next()
                        .expect("--runs N")
                        .parse::<usize>()
                        .expect("a number of runs"),
                )
            }
            // `cargo bench` passes `--bench`; filters are not supported.
            _ => {}
        }
    }
    if let Some(dir) = write_to {
        for &n in &sizes {
            let root = dir.join(n.to_string());
            write_stack(n, None, root.clone());
            eprintln!("wrote {}", root.display());
        }
        return;
    }
    let threads = std::thread::available_parallelism().map_or(0, |n| n.get());
    eprintln!("elaborate benchmark: {threads} cores, sizes {sizes:?}");
    let mut results = Vec::new();
    for &n in &sizes {
        let runs = runs.unwrap_or(if n <= 300 { 15 } else { 7 }).max(1);
        eprintln!("  {n} components, {runs} runs...");
        let r = run(n, runs);
        eprintln!(
            "    {} files, {} KiB in, {} KiB out, {} warnings",
            r.files,
            r.bytes / 1024,
            r.output_bytes / 1024,
            r.warnings
        );
        results.push(r);
    }

    println!();
    println!("Median (min) of the timed runs; ratio = elaborate ÷ parse floor, both medians.");
    println!("CPU = mean CPU time per run over all threads (10 ms ticks); the parse floor runs on one thread.");
    println!();
    println!("| components | files | parse floor (`Value`) | typed parse | elaborate (library + render) | of which render | elaborate CPU | ratio | `hub elaborate` (process) | process CPU |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in &results {
        println!(
            "| {} | {} | {} ({}) | {} ({}) | {} ({}) | {} | {} | {:.2}× | {} ({}) | {} |",
            r.n,
            r.files,
            ms(r.floor.median()),
            ms(r.floor.min()),
            ms(r.typed.median()),
            ms(r.typed.min()),
            ms(r.library.median()),
            ms(r.library.min()),
            ms(r.render.median()),
            ms(r.library_cpu),
            ratio(r.library.median(), r.floor.median()),
            ms(r.binary.median()),
            ms(r.binary.min()),
            ms(r.binary_cpu),
        );
    }
    if let (Some(small), Some(large)) = (results.first(), results.last()) {
        if large.n > small.n {
            let scale = large.n as f64 / small.n as f64;
            println!();
            println!(
                "Growth {} → {} components ({scale:.0}× the components): parse floor {:.1}×, typed parse {:.1}×, elaborate {:.1}×, process {:.1}×.",
                small.n,
                large.n,
                ratio(large.floor.median(), small.floor.median()),
                ratio(large.typed.median(), small.typed.median()),
                ratio(large.library.median(), small.library.median()),
                ratio(large.binary.median(), small.binary.median()),
            );
        }
    }
    let worst = results
        .iter()
        .map(|r| ratio(r.library.median(), r.floor.median()))
        .fold(0.0, f64::max);
    println!();
    println!(
        "Target elaborate ≤ 2× the parse floor: {} (worst {:.2}×).",
        if worst <= 2.0 { "met" } else { "missed" },
        worst
    );
}

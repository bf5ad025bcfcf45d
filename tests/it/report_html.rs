//! The HTML run report: `--report FILE.html` of deploy and plan, `hub
//! report STATE|REPORT.json -o FILE.html`, and the page of a 20-component
//! run with a failure opened in a real browser (headless Chromium): every
//! component is in the DOM, the failed one first, no secret, and the
//! screenshot is a real picture.

use crate::common::{hub_isolated, skipped, Output, Test};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const SECRET: &str = "hunter2-report-secret";
const COUNT: usize = 20;
const FAILING: &str = "c07";

fn name(i: usize) -> String {
    format!("c{i:02}")
}

/// 20 components in layers of four, each depending on the one four
/// before it (odd ones on the one five before too); `c07` prints the database password (a secret by its name) and
/// fails; every other prints which run it is (`c00 run 2`) and an output.
fn twenty() -> Test {
    let mut manifest =
        String::from("version: 1\nkind: stack\nmeta:\n  name: twenty\ncomponents:\n");
    let mut test = Test::new();
    for i in 0..COUNT {
        let n = name(i);
        let _ = writeln!(
            manifest,
            "  - name: {n}\n    source:\n      dir: components/{n}"
        );
        // Four chains, odd ones also tied to the chain before.
        if i >= 4 {
            let mut depends = vec![name(i - 4)];
            if i % 2 == 1 {
                depends.push(name(i - 5));
            }
            let _ = writeln!(manifest, "    depends: [{}]", depends.join(", "));
        }
        let component = format!(
            "version: 1\nkind: component\nmeta: {{name: {n}}}\nparameters:\n  - name: db.password\n    env: DB_PASSWORD\noutputs:\n  - {{name: url, fromTfVar: url}}\n"
        );
        let body = if n == FAILING {
            "#!/bin/sh\necho \"connecting with $DB_PASSWORD\"\necho 'the database said no' >&2\nexit 3\n"
                .to_string()
        } else {
            // Each run says which it is: its count of runs, kept beside.
            format!("#!/bin/sh\necho x >> runs.count\necho \"{n} run $(wc -l < runs.count | tr -d ' ')\"\nsleep 0.0{}\necho; echo Outputs:; echo 'url = https://{n}.example'; echo\n", i % 5)
        };
        test = test
            .file(&format!("components/{n}/hub-component.yaml"), &component)
            .script(&format!("components/{n}/deploy.sh"), &body)
            .script(&format!("components/{n}/undeploy.sh"), "#!/bin/sh\n");
    }
    manifest.push_str(&format!(
        "parameters:\n  - name: db.password\n    value: {SECRET}\nlifecycle:\n  verbs: [deploy, undeploy]\n"
    ));
    test.file("hub.yaml", &manifest)
}

fn hub(test: &Test, args: &[&str]) -> Output {
    hub_isolated(test, args, &[("HUB_OPERATION_ID", "op-1")])
}

/// The card of component `name`: from its `<details` to its end.
fn card<'h>(html: &'h str, name: &str) -> &'h str {
    let at = html
        .find(&format!("data-name=\"{name}\""))
        .unwrap_or_else(|| panic!("no card {name}"));
    let start = html[..at].rfind("<details").expect("its <details");
    let end = html[at..].find("</details>").expect("its end") + at;
    &html[start..end]
}

/// How many outputs a card lists.
fn outputs(card: &str) -> usize {
    card.split("<table class=\"outputs mono\">")
        .nth(1)
        .and_then(|table| table.split("</table>").next())
        .map_or(0, |table| table.matches("<tr>").count())
}

/// `data-name` of each component card, in page order.
fn cards(html: &str) -> Vec<String> {
    html.match_indices("<details class=\"component")
        .filter_map(|(at, _)| {
            let rest = &html[at..];
            let start = rest.find("data-name=\"")? + 11;
            Some(rest[start..].split('"').next()?.to_string())
        })
        .collect()
}

#[test]
fn a_deploy_writes_the_page_and_hub_report_writes_it_again_from_the_state() {
    let test = twenty();
    let out = hub(
        &test,
        &[
            "deploy",
            "hub.yaml",
            "-s",
            "hub.yaml.state",
            "-j",
            "4",
            "--report",
            "run.html",
        ],
    );
    out.failure().stderr_has("c07");
    let html = std::fs::read_to_string(test.root().join("run.html")).expect("run.html");
    let order = cards(&html);
    assert_eq!(order.len(), COUNT, "{order:?}");
    assert_eq!(order[0], FAILING);
    assert!(!html.contains(SECRET), "the secret is in the page");
    assert!(
        html.contains("connecting with (masked)"),
        "the log tail is shown"
    );
    assert!(
        html.contains("https:&#x2f;&#x2f;c00.example"),
        "outputs are shown"
    );
    assert!(html.contains("<svg") && !html.contains("<script"));
    // Components that depend on the failed one were cancelled.
    assert!(html.contains("data-name=\"c11\" data-status=\"cancelled\""));

    let out = hub(&test, &["report", "hub.yaml.state", "-o", "past.html"]);
    out.success();
    let past = std::fs::read_to_string(test.root().join("past.html")).expect("past.html");
    let order = cards(&past);
    assert_eq!(order[0], FAILING, "{order:?}");
    assert!(order.contains(&name(0)) && !past.contains(SECRET));
    assert!(past.contains("connecting with (masked)"));
}

#[test]
fn a_json_report_becomes_a_page_and_a_plan_writes_one_too() {
    let test = twenty();
    hub(
        &test,
        &[
            "deploy",
            "hub.yaml",
            "-s",
            "hub.yaml.state",
            "--report",
            "run.json",
        ],
    )
    .failure();
    hub(&test, &["report", "run.json", "-o", "run.html"]).success();
    let html = std::fs::read_to_string(test.root().join("run.html")).expect("run.html");
    assert_eq!(cards(&html)[0], FAILING);
    assert!(!html.contains(SECRET));

    hub(
        &test,
        &[
            "plan",
            "hub.yaml",
            "-s",
            "hub.yaml.state",
            "--report",
            "plan.html",
        ],
    )
    .success();
    let plan = std::fs::read_to_string(test.root().join("plan.html")).expect("plan.html");
    assert_eq!(cards(&plan).len(), COUNT);
    assert!(
        plan.contains("data-name=\"c07\" data-status=\"deploy\""),
        "{plan}"
    );
    assert!(plan.contains("(replace)") || plan.contains("(create)"));
    assert!(!plan.contains(SECRET));
    assert!(
        !plan.contains("<pre class=\"log\">"),
        "a plan ran nothing: no log"
    );
}

#[test]
fn hub_report_names_what_it_cannot_read() {
    let test = Test::new().file("broken.json", "{\"version\": 1}");
    let out = hub(&test, &["report", "broken.json", "-o", "x.html"]);
    out.failure()
        .stderr_has("`broken.json` is not a run report of this hub")
        .stderr_has("--report FILE.json");
    assert!(!test.root().join("x.html").exists());
}

/// Chromium: `$HUB_TEST_CHROMIUM`, else `chromium` or `chromium-browser`
/// on the PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("HUB_TEST_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    ["chromium", "chromium-browser"]
        .into_iter()
        .find_map(|name| which::which(name).ok())
}

/// Runs headless Chromium with nothing reaching the network and a
/// profile of its own.
fn browse(chromium: &Path, profile: &Path, args: &[&str], page: &Path) -> std::process::Output {
    let url = format!("file://{}", page.display());
    std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .output()
        .expect("run chromium")
}

/// Width, height and the inflated rows of a PNG (each row's filter byte
/// left out; the rest still filtered, which keeps a one-colour picture to
/// a byte value or two).
fn decode_png(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    use std::io::Read;
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let mut at = 8;
    let (mut width, mut height, mut channels) = (0, 0, 0);
    let mut data = Vec::new();
    while at + 8 <= bytes.len() {
        let length = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let kind = &bytes[at + 4..at + 8];
        let body = &bytes[at + 8..at + 8 + length];
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(body[0..4].try_into().unwrap());
                height = u32::from_be_bytes(body[4..8].try_into().unwrap());
                assert_eq!(body[8], 8, "8 bits a channel");
                channels = match body[9] {
                    2 => 3,
                    6 => 4,
                    other => panic!("colour type {other}"),
                };
            }
            b"IDAT" => data.extend_from_slice(body),
            _ => {}
        }
        at += 12 + length;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&data[..])
        .read_to_end(&mut raw)
        .expect("inflate");
    let stride = width as usize * channels + 1;
    assert_eq!(raw.len(), stride * height as usize);
    let rows = raw
        .chunks(stride)
        .flat_map(|row| row[1..].to_vec())
        .collect();
    (width, height, rows)
}

#[test]
fn the_page_of_a_failed_run_opens_in_a_browser() {
    let Some(chromium) = chromium() else {
        skipped("no chromium on the PATH (scripts/test-deps installs it)");
        return;
    };
    let test = twenty();
    // Twice: the page is of the second run.
    for _ in 0..2 {
        hub(
            &test,
            &[
                "deploy",
                "hub.yaml",
                "-s",
                "hub.yaml.state",
                "-j",
                "4",
                "--report",
                "run.html",
            ],
        )
        .failure();
    }
    let page = test.root().join("run.html");
    let profile = test.root().join("chromium-profile");

    let dumped = browse(&chromium, &profile, &["--dump-dom"], &page);
    let dom = String::from_utf8_lossy(&dumped.stdout);
    assert!(
        dumped.status.success() && dom.contains("</html>"),
        "chromium failed: {}",
        String::from_utf8_lossy(&dumped.stderr)
    );
    let order = cards(&dom);
    let mut expected: Vec<String> = (0..COUNT).map(name).collect();
    let mut seen = order.clone();
    seen.sort();
    expected.sort();
    assert_eq!(seen, expected, "every component is in the DOM once");
    assert_eq!(order[0], FAILING, "the failed component comes first");
    assert!(!dom.contains(SECRET), "no secret in the DOM");
    assert!(dom.contains("data-component=\"c07\""), "its bar is drawn");
    // Each card: its own output, and its log of this run only.
    // (The first seven all start before `c07` fails.)
    for i in 0..7 {
        let n = name(i);
        let card = card(&dom, &n);
        assert_eq!(outputs(card), 1, "{card}");
        assert!(card.contains(&format!("https://{n}.example")), "{card}");
        assert!(card.contains(&format!("{n} run 2\n")), "{card}");
        assert!(!card.contains(&format!("{n} run 1")), "{card}");
    }
    let failed = card(&dom, FAILING);
    assert_eq!(failed.matches("connecting with (masked)").count(), 1);

    let shot = test.root().join("shot.png");
    let taken = browse(
        &chromium,
        &profile,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1000,1400",
            "--hide-scrollbars",
        ],
        &page,
    );
    assert!(
        taken.status.success(),
        "{}",
        String::from_utf8_lossy(&taken.stderr)
    );
    let bytes = std::fs::read(&shot).expect("the screenshot");
    assert!(bytes.len() > 20_000, "a {} byte screenshot", bytes.len());
    let (width, height, pixels) = decode_png(&bytes);
    assert_eq!((width, height), (1000, 1400));
    // A blank page (one colour) filters to one or two byte values.
    let mut values = [false; 256];
    for &byte in &pixels {
        values[usize::from(byte)] = true;
    }
    let distinct = values.iter().filter(|&&v| v).count();
    assert!(distinct > 16, "{distinct} byte values: a blank screenshot");
}

/// A card shows its component's outputs only (a component's entry in the
/// state holds those of the components before it too) and the part of its
/// log the reported run wrote, not what earlier runs appended; a component
/// the run did not run shows no log. The same from `hub report STATE` and
/// from a JSON report. Times show to the millisecond.
#[test]
fn a_card_shows_its_own_outputs_and_the_log_of_this_run() {
    let test = twenty();
    // Each run its own operation id, as without HUB_OPERATION_ID.
    let deploy = |report: &str, id: &str| {
        let args = [
            "deploy",
            "hub.yaml",
            "-s",
            "hub.yaml.state",
            "--report",
            report,
        ];
        hub_isolated(&test, &args, &[("HUB_OPERATION_ID", id)]).failure();
    };
    deploy("first.html", "op-1");
    deploy("second.json", "op-2");
    deploy("run.html", "op-3");
    let log = std::fs::read_to_string(test.root().join("hub.yaml.state.logs/c04.log"))
        .expect("c04's log");
    assert!(
        log.contains("c04 run 1\n") && log.contains("c04 run 3\n"),
        "{log}"
    );
    let html = std::fs::read_to_string(test.root().join("run.html")).expect("run.html");
    let c04 = card(&html, "c04");
    assert!(
        c04.contains("<tr><td>url</td><td>https:&#x2f;&#x2f;c04.example</td></tr>"),
        "{c04}"
    );
    assert_eq!(outputs(c04), 1, "one output: {c04}");
    assert!(!c04.contains("c00.example"), "{c04}");
    assert!(c04.contains("<strong>Log of this run</strong>"), "{c04}");
    assert!(c04.contains("c04 run 3\n"), "{c04}");
    assert!(
        !c04.contains("c04 run 1") && !c04.contains("c04 run 2"),
        "{c04}"
    );
    let c07 = card(&html, FAILING);
    assert_eq!(c07.matches("connecting with (masked)").count(), 1, "{c07}");
    // Never run (cancelled): no log.
    assert!(!card(&html, "c11").contains("class=\"log\""));
    // To the millisecond, not the nanosecond.
    let started = c04.split("<th>started</th><td>").nth(1).expect("started");
    let started = started.split('<').next().unwrap_or_default();
    assert_eq!(started.len(), "2026-01-01T00:00:00.000Z".len(), "{started}");
    assert!(
        started.ends_with('Z') && started.as_bytes()[19] == b'.',
        "{started}"
    );

    // The second run's page, from its JSON report: its part of each log.
    hub(&test, &["report", "second.json", "-o", "second.html"]).success();
    let second = std::fs::read_to_string(test.root().join("second.html")).expect("page");
    let c04 = card(&second, "c04");
    assert!(
        c04.contains("c04 run 2\n") && !c04.contains("c04 run 3"),
        "{c04}"
    );
    assert!(!c04.contains("c04 run 1"), "{c04}");

    // A deploy of `c00` alone: the others' cards have no log.
    hub(
        &test,
        &[
            "deploy",
            "hub.yaml",
            "-s",
            "hub.yaml.state",
            "-c",
            "c00",
            "--report",
            "one.html",
        ],
    )
    .success();
    hub(&test, &["report", "hub.yaml.state", "-o", "past.html"]).success();
    let past = std::fs::read_to_string(test.root().join("past.html")).expect("page");
    assert_eq!(cards(&past), ["c00"]);
    let c00 = card(&past, "c00");
    assert!(
        c00.contains("c00 run 4\n") && !c00.contains("c00 run 3"),
        "{c00}"
    );
    assert_eq!(outputs(c00), 1, "one output: {c00}");
}

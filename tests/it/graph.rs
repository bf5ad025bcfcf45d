//! `hub graph`: the dependency graph as dot and Mermaid, with and without
//! a state, on the demo stack and on small elaborated stacks.

use crate::common::{demo_copy, Output, Test};
use std::path::Path;

/// A diamond: `right` requires what `base` provides; `right` is optional.
/// No `lifecycle.order`: it is derived from `depends`, leaving `right` free
/// to run beside `left`.
const DIAMOND: &str = r#"
version: 1
kind: stack
meta: {name: diamond}
components:
- {name: base, source: {dir: base}}
- {name: left, source: {dir: left}, depends: [base]}
- {name: right, source: {dir: right}}
- {name: top, source: {dir: top}, depends: [left, right]}
lifecycle: {optional: [right]}
---
version: 1
kind: component
meta: {name: base}
provides: [kube]
---
version: 1
kind: component
meta: {name: left}
---
version: 1
kind: component
meta: {name: right}
requires: [kube]
---
version: 1
kind: component
meta: {name: top}
"#;

/// Runs hub in `dir` with pinned time, ids and user.
fn hub_in(dir: &Path, args: &[&str]) -> Output {
    let out = assert_cmd::Command::cargo_bin("hub")
        .expect("hub")
        .current_dir(dir)
        .args(args)
        .env("USER", "tester")
        .env("HUB_NOW", "2026-01-01T00:00:00Z")
        .env("HUB_OPERATION_ID", "op-1")
        .env("HUB_RANDOM_SEED", "1")
        .env_remove("HUB_FORCE")
        .env_remove("ENV")
        .write_stdin(Vec::new())
        .output()
        .expect("run hub");
    Output::of(out, dir)
}

#[test]
fn demo_as_dot() {
    let (_dir, demo) = demo_copy();
    let out = hub_in(&demo, &["graph", "hub.yaml", "params.yaml"]);
    out.success();
    insta::assert_snapshot!(out.stdout, @r#"
    // stack demo: 4 components in 4 waves; solid edges are `depends`, dashed ones a `requires` met by an earlier `provides` or an output read, dotted ones the written `lifecycle.order`
    digraph "demo" {
      rankdir=LR;
      node [shape=box, style=rounded];
      subgraph "wave 1" {
        rank=same;
        "network" [label="network", style="rounded"];
      }
      subgraph "wave 2" {
        rank=same;
        "database" [label="database", style="rounded"];
      }
      subgraph "wave 3" {
        rank=same;
        "app" [label="app", style="rounded"];
      }
      subgraph "wave 4" {
        rank=same;
        "monitoring" [label="monitoring (optional)", style="rounded,dashed"];
      }
      "network" -> "database";
      "database" -> "app";
      "app" -> "monitoring";
    }
    "#);
}

#[test]
fn demo_after_a_deploy_shows_each_status() {
    let (_dir, demo) = demo_copy();
    hub_in(
        &demo,
        &["deploy", "hub.yaml", "params.yaml", "-s", "demo.state"],
    )
    .success();
    let state_before = std::fs::read(demo.join("demo.state")).expect("state");
    let args = ["graph", "hub.yaml", "params.yaml", "-s", "demo.state"];
    let out = hub_in(&demo, &args);
    out.success();
    insta::assert_snapshot!(out.stdout, @r##"
    // stack demo: 4 components in 4 waves; solid edges are `depends`, dashed ones a `requires` met by an earlier `provides` or an output read, dotted ones the written `lifecycle.order`
    digraph "demo" {
      rankdir=LR;
      node [shape=box, style=rounded];
      subgraph "wave 1" {
        rank=same;
        "network" [label="network\ndeployed", style="rounded,filled", fillcolor="#a5d6a7", color="#2e7d32"];
      }
      subgraph "wave 2" {
        rank=same;
        "database" [label="database\ndeployed", style="rounded,filled", fillcolor="#a5d6a7", color="#2e7d32"];
      }
      subgraph "wave 3" {
        rank=same;
        "app" [label="app\ndeployed", style="rounded,filled", fillcolor="#a5d6a7", color="#2e7d32"];
      }
      subgraph "wave 4" {
        rank=same;
        "monitoring" [label="monitoring (optional)\nundeployed", style="rounded,dashed,filled", fillcolor="#e0e0e0", color="#757575"];
      }
      "network" -> "database";
      "database" -> "app";
      "app" -> "monitoring";
    }
    "##);
    let out = hub_in(&demo, &[&args[..], &["--format", "mermaid"]].concat());
    out.success();
    insta::assert_snapshot!(out.stdout, @r#"
    flowchart LR
      %% stack demo: 4 components in 4 waves; solid edges are `depends`, dashed ones a `requires` met by an earlier `provides` or an output read, dotted ones the written `lifecycle.order`
      %% wave 1: network
      %% wave 2: database
      %% wave 3: app
      %% wave 4: monitoring
      n0["network<br>deployed"]
      n1["database<br>deployed"]
      n2["app<br>deployed"]
      n3["monitoring (optional)<br>undeployed"]
      n0 --> n1
      n1 --> n2
      n2 --> n3
      classDef deployed fill:#a5d6a7,stroke:#2e7d32
      class n0,n1,n2 deployed
      classDef idle fill:#e0e0e0,stroke:#757575
      class n3 idle
      classDef optional stroke-dasharray:5 5
      class n3 optional
    "#);
    assert_eq!(
        std::fs::read(demo.join("demo.state")).expect("state"),
        state_before,
        "the state is only read"
    );
    assert!(
        !demo.join("demo.state.lock").exists(),
        "graph takes no lock"
    );
}

#[test]
fn a_diamond_with_a_requires_edge() {
    let t = Test::new().file("hub.yaml.elaborate", DIAMOND);
    let out = t
        .args(&["graph", "hub.yaml.elaborate", "--format", "mermaid"])
        .run();
    out.success();
    insta::assert_snapshot!(out.stdout, @r#"
    flowchart LR
      %% stack diamond: 4 components in 3 waves; solid edges are `depends`, dashed ones a `requires` met by an earlier `provides` or an output read, dotted ones the written `lifecycle.order`
      %% wave 1: base
      %% wave 2: left, right
      %% wave 3: top
      n0["base"]
      n1["left"]
      n2["right (optional)"]
      n3["top"]
      n0 --> n1
      n0 -.->|"kube"| n2
      n1 --> n3
      n2 --> n3
      classDef optional stroke-dasharray:5 5
      class n2 optional
    "#);
    let out = Test::new()
        .file("hub.yaml.elaborate", DIAMOND)
        .args(&["graph", "hub.yaml.elaborate"])
        .run();
    out.success();
    insta::assert_snapshot!(out.stdout, @r#"
    // stack diamond: 4 components in 3 waves; solid edges are `depends`, dashed ones a `requires` met by an earlier `provides` or an output read, dotted ones the written `lifecycle.order`
    digraph "diamond" {
      rankdir=LR;
      node [shape=box, style=rounded];
      subgraph "wave 1" {
        rank=same;
        "base" [label="base", style="rounded"];
      }
      subgraph "wave 2" {
        rank=same;
        "left" [label="left", style="rounded"];
        "right" [label="right (optional)", style="rounded,dashed"];
      }
      subgraph "wave 3" {
        rank=same;
        "top" [label="top", style="rounded"];
      }
      "base" -> "left";
      "base" -> "right" [style=dashed, label="kube"];
      "left" -> "top";
      "right" -> "top";
    }
    "#);
}

#[test]
fn names_are_escaped() {
    // `\` and control characters cannot be in a component name.
    let stack = r#"
        version: 1
        kind: stack
        meta: {name: 'odd "stack"'}
        components:
        - {name: plain, source: {dir: a}}
        - {name: 'we"ird <b>|#1', source: {dir: b}, depends: [plain]}
        lifecycle: {order: [plain, 'we"ird <b>|#1']}
        ---
        version: 1
        kind: component
        meta: {name: plain}
        ---
        version: 1
        kind: component
        meta: {name: 'we"ird <b>|#1'}
    "#;
    let out = Test::new()
        .file("hub.yaml.elaborate", stack)
        .args(&["graph", "hub.yaml.elaborate"])
        .run();
    out.success();
    insta::assert_snapshot!(out.stdout, @r#"
    // stack odd "stack": 2 components in 2 waves; solid edges are `depends`, dashed ones a `requires` met by an earlier `provides` or an output read, dotted ones the written `lifecycle.order`
    digraph "odd \"stack\"" {
      rankdir=LR;
      node [shape=box, style=rounded];
      subgraph "wave 1" {
        rank=same;
        "plain" [label="plain", style="rounded"];
      }
      subgraph "wave 2" {
        rank=same;
        "we\"ird <b>|#1" [label="we\"ird <b>|#1", style="rounded"];
      }
      "plain" -> "we\"ird <b>|#1";
    }
    "#);
    let out = Test::new()
        .file("hub.yaml.elaborate", stack)
        .args(&["graph", "hub.yaml.elaborate", "--format", "mermaid"])
        .run();
    out.success();
    insta::assert_snapshot!(out.stdout, @r#"
    flowchart LR
      %% stack odd "stack": 2 components in 2 waves; solid edges are `depends`, dashed ones a `requires` met by an earlier `provides` or an output read, dotted ones the written `lifecycle.order`
      %% wave 1: plain
      %% wave 2: we"ird <b>|#1
      n0["plain"]
      n1["we#34;ird #60;b#62;#124;#35;1"]
      n0 --> n1
    "#);
}

#[test]
fn a_missing_state_shows_status_none() {
    let out = Test::new()
        .file("hub.yaml.elaborate", DIAMOND)
        .args(&["graph", "hub.yaml.elaborate", "-s", "nowhere.state"])
        .run();
    out.success();
    assert_eq!(out.stdout.matches("\\nnone\"").count(), 4, "{}", out.stdout);
    assert!(!out.root.join("nowhere.state").exists());
    assert!(!out.root.join("nowhere.state.lock").exists());
}

#[test]
fn an_unreadable_state_is_an_error_naming_the_file() {
    let out = Test::new()
        .file("hub.yaml.elaborate", DIAMOND)
        .file("broken.state", "version: [1\nkind: state\n")
        .args(&["graph", "hub.yaml.elaborate", "-s", "broken.state"])
        .run();
    out.failure()
        .stderr_has("not valid YAML")
        .stderr_has("--> broken.state:1:10");
    assert_eq!(out.stdout, "");
}

#[test]
fn a_malformed_manifest_is_an_error_with_its_location() {
    let out = Test::new()
        .file("hub.yaml", "kind: stack\ncomponents: [\n")
        .args(&["graph", "hub.yaml"])
        .run();
    out.failure()
        .stderr_has("--> hub.yaml:3:1")
        .stderr_has("help:");
    assert_eq!(out.stdout, "");
}

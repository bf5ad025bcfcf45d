//! Generated stacks in the shapes a scheduler cares about: a chain, a
//! fan-out, a diamond and layered graphs. Each component is a folder with a
//! manifest and `deploy.sh`/`undeploy.sh` running a chosen shell body,
//! optionally recording `start NAME NS` / `end NAME NS` lines in a shared
//! events file and exiting with a chosen code.
//!
//! Standard library only: `benches/schedule.rs` includes this file too.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The form of a generated dependency graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Each component depends on the one before.
    Chain,
    /// One root, every other component depends on it.
    FanOut,
    /// One root, n − 2 middles depending on it, one sink depending on them.
    Diamond,
    /// Layers of `width` components, each depending on one or two of the
    /// previous layer, chosen pseudo-randomly from `seed`.
    Layered { width: usize, seed: u64 },
}

impl Shape {
    pub fn label(&self) -> String {
        match self {
            Shape::Chain => "chain".into(),
            Shape::FanOut => "fan-out".into(),
            Shape::Diamond => "diamond".into(),
            Shape::Layered { width, .. } => format!("layered(w={width})"),
        }
    }

    /// The graph of `size` components (at least one; a diamond has at
    /// least three).
    pub fn graph(&self, size: usize) -> Graph {
        let size = size.max(1);
        let depends = match *self {
            Shape::Chain => (0..size)
                .map(|i| if i == 0 { vec![] } else { vec![i - 1] })
                .collect(),
            Shape::FanOut => (0..size)
                .map(|i| if i == 0 { vec![] } else { vec![0] })
                .collect(),
            Shape::Diamond => diamond(size.max(3)),
            Shape::Layered { width, seed } => layered(size, width.max(1), seed),
        };
        Graph::new(depends)
    }
}

fn diamond(size: usize) -> Vec<Vec<usize>> {
    let sink = size - 1;
    (0..size)
        .map(|i| match i {
            0 => vec![],
            i if i == sink => (1..sink).collect(),
            _ => vec![0],
        })
        .collect()
}

fn layered(size: usize, width: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut random = SplitMix(seed);
    (0..size)
        .map(|i| {
            let layer = i / width;
            if layer == 0 {
                return vec![];
            }
            let previous = (layer - 1) * width;
            let first = previous + random.below(width);
            let mut depends = vec![first];
            if random.below(2) == 1 {
                let second = previous + random.below(width);
                if second != first {
                    depends.push(second);
                }
            }
            depends.sort_unstable();
            depends
        })
        .collect()
}

/// A small deterministic generator (SplitMix64).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }
}

/// Components `c0`, `c1`, … in declaration order; every component depends
/// only on components declared before it, so the declaration order is the
/// order a one-at-a-time deploy follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    pub names: Vec<String>,
    /// `depends[i]`: the positions `names[i]` depends on.
    pub depends: Vec<Vec<usize>>,
}

impl Graph {
    pub fn new(depends: Vec<Vec<usize>>) -> Self {
        for (i, list) in depends.iter().enumerate() {
            assert!(list.iter().all(|&d| d < i), "c{i} depends on a later one");
        }
        let names = (0..depends.len()).map(|i| format!("c{i}")).collect();
        Graph { names, depends }
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Every `(dependency, dependent)` pair, by name.
    pub fn edges(&self) -> Vec<(&str, &str)> {
        self.depends
            .iter()
            .enumerate()
            .flat_map(|(i, list)| {
                list.iter()
                    .map(move |&d| (self.names[d].as_str(), self.names[i].as_str()))
            })
            .collect()
    }

    /// The position of `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// For each component, the number of components on the longest
    /// dependency path ending with it (1 for a root).
    pub fn levels(&self) -> Vec<usize> {
        let mut level = vec![0; self.len()];
        for i in 0..self.len() {
            level[i] = 1 + self.depends[i].iter().map(|&d| level[d]).max().unwrap_or(0);
        }
        level
    }

    /// The longest dependency path, in components: with every component
    /// taking one unit of time, the shortest possible makespan.
    pub fn critical_path(&self) -> usize {
        self.levels().into_iter().max().unwrap_or(0)
    }

    /// The total work, in units: one per component.
    pub fn total_work(&self) -> usize {
        self.len()
    }

    /// The most components on one level: with this many workers and unit
    /// times, every component starts as soon as its dependencies are done.
    pub fn width(&self) -> usize {
        let mut count = BTreeMap::new();
        for level in self.levels() {
            *count.entry(level).or_insert(0) += 1;
        }
        count.into_values().max().unwrap_or(0)
    }

    /// Every component that depends on `name`, directly or not.
    pub fn downstream(&self, name: &str) -> Vec<String> {
        let Some(start) = self.position(name) else {
            return Vec::new();
        };
        let mut reached = vec![false; self.len()];
        reached[start] = true;
        let mut found = Vec::new();
        for i in start + 1..self.len() {
            if self.depends[i].iter().any(|&d| reached[d]) {
                reached[i] = true;
                found.push(self.names[i].clone());
            }
        }
        found
    }
}

/// What each generated component does.
#[derive(Debug, Clone, Default)]
pub struct Scripts {
    /// YAML appended to every `hub-component.yaml`, with `{name}` replaced
    /// by the component's name (e.g. an `outputs:` list).
    pub manifest: String,
    /// Shell run by every `deploy.sh` and `undeploy.sh`; `$name` is the
    /// component's name.
    pub body: String,
    /// Bodies for some components instead of [`Scripts::body`].
    pub bodies: Vec<(String, String)>,
    /// Where `start NAME NS` and `end NAME NS` lines are appended.
    pub events: Option<PathBuf>,
    /// Components whose scripts exit with this code (after the body and the
    /// `end` event).
    pub exit_codes: Vec<(String, i32)>,
}

impl Scripts {
    /// Every script runs `body`.
    pub fn running(body: &str) -> Self {
        Scripts {
            body: body.to_string(),
            ..Scripts::default()
        }
    }

    pub fn declaring(mut self, manifest: &str) -> Self {
        self.manifest = manifest.to_string();
        self
    }

    /// `name`'s `hub-component.yaml`.
    pub fn component_manifest(&self, name: &str) -> String {
        format!(
            "version: 1\nkind: component\nmeta:\n  name: {name}\n{}",
            self.manifest.replace("{name}", name)
        )
    }

    pub fn recording(mut self, events: &Path) -> Self {
        self.events = Some(events.to_path_buf());
        self
    }

    pub fn failing(mut self, name: &str, code: i32) -> Self {
        self.exit_codes.push((name.to_string(), code));
        self
    }

    pub fn with_body(mut self, name: &str, body: &str) -> Self {
        self.bodies.push((name.to_string(), body.to_string()));
        self
    }

    /// The text of `name`'s script (deploy and undeploy alike).
    pub fn script(&self, name: &str) -> String {
        let body = self
            .bodies
            .iter()
            .find(|(n, _)| n == name)
            .map_or(self.body.as_str(), |(_, b)| b.as_str());
        let mut text = format!("#!/bin/sh\nname={name}\n");
        let event = |text: &mut String, kind: &str| {
            if let Some(events) = &self.events {
                let _ = writeln!(
                    text,
                    "printf '{kind} %s %s\\n' \"$name\" \"$(date +%s%N)\" >> '{}'",
                    events.display()
                );
            }
        };
        event(&mut text, "start");
        text.push_str(body);
        text.push('\n');
        event(&mut text, "end");
        if let Some((_, code)) = self.exit_codes.iter().find(|(n, _)| n == name) {
            let _ = writeln!(text, "exit {code}");
        }
        text
    }
}

/// The stack manifest: components with `source.dir` and `depends`, no
/// `lifecycle.order` (hub derives it from `depends`).
pub fn stack_manifest(graph: &Graph) -> String {
    let mut text = String::from("version: 1\nkind: stack\nmeta:\n  name: shape\ncomponents:\n");
    for (i, name) in graph.names.iter().enumerate() {
        let _ = writeln!(
            text,
            "  - name: {name}\n    source:\n      dir: components/{name}"
        );
        if !graph.depends[i].is_empty() {
            let depends: Vec<&str> = graph.depends[i]
                .iter()
                .map(|&d| graph.names[d].as_str())
                .collect();
            let _ = writeln!(text, "    depends: [{}]", depends.join(", "));
        }
    }
    text.push_str("lifecycle:\n  verbs: [deploy, undeploy]\n");
    text
}

/// Writes `hub.yaml` and `components/NAME/{hub-component.yaml, deploy.sh,
/// undeploy.sh}` below `root`.
pub fn write_stack(root: &Path, graph: &Graph, scripts: &Scripts) -> std::io::Result<()> {
    std::fs::write(root.join("hub.yaml"), stack_manifest(graph))?;
    for name in &graph.names {
        let dir = root.join("components").join(name);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join("hub-component.yaml"),
            scripts.component_manifest(name),
        )?;
        for file in ["deploy.sh", "undeploy.sh"] {
            let path = dir.join(file);
            std::fs::write(&path, scripts.script(name))?;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        }
    }
    Ok(())
}

/// One line of an events file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub start: bool,
    pub name: String,
    pub nanos: u128,
}

/// The events recorded in `path`, in the order they were written; lines
/// that do not parse are an error.
pub fn read_events(path: &Path) -> std::io::Result<Vec<Event>> {
    let text = std::fs::read_to_string(path)?;
    text.lines()
        .map(|line| {
            parse_event(line).ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("bad event line {line:?}"),
                )
            })
        })
        .collect()
}

/// One `start NAME NS` or `end NAME NS` line.
pub fn parse_event(line: &str) -> Option<Event> {
    let mut words = line.split(' ');
    let start = match words.next()? {
        "start" => true,
        "end" => false,
        _ => return None,
    };
    let name = words.next()?.to_string();
    let nanos = words.next()?.parse().ok()?;
    words
        .next()
        .is_none()
        .then_some(Event { start, name, nanos })
}

/// When each component started and ended (nanoseconds), by name; a
/// component without both events is left out.
pub fn intervals(events: &[Event]) -> BTreeMap<String, (u128, u128)> {
    let mut starts = BTreeMap::new();
    let mut found = BTreeMap::new();
    for event in events {
        if event.start {
            starts.insert(event.name.clone(), event.nanos);
        } else if let Some(&start) = starts.get(&event.name) {
            found.insert(event.name.clone(), (start, event.nanos));
        }
    }
    found
}

/// The most intervals open at the same instant (an interval ending exactly
/// when another starts does not overlap it).
pub fn max_overlap(intervals: &BTreeMap<String, (u128, u128)>) -> usize {
    let mut points: Vec<(u128, i32)> = intervals
        .values()
        .flat_map(|&(start, end)| [(start, 1), (end, -1)])
        .collect();
    // Ends before starts at the same instant.
    points.sort();
    let mut open = 0i32;
    let mut most = 0i32;
    for (_, change) in points {
        open += change;
        most = most.max(open);
    }
    most as usize
}

//! Random stack shapes, so that the scale benchmark looks for the shapes
//! nobody thought of: each seed draws a width (components per layer), how
//! many layers back a dependency may reach, a fan-in range (1 to 8), a
//! range of 2 to 46 parameters per component, how many upstream outputs
//! a component reads, whether the order is written and whether the roots
//! say `depends: []`, and the share of parameters a `params.yaml`
//! overrides. The graph at a size is drawn component by component from
//! the seed and the component's index, so the stack at 1,000 components
//! is the first part of the stack at 10,000: the growth from one to the
//! other is that of one shape.

use std::fmt::Write as _;

/// SplitMix64: small, seedable, and the same on every machine.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, stream: u64) -> Rng {
        Rng(seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `low..=high`.
    fn range(&mut self, low: usize, high: usize) -> usize {
        low + (self.next() % (high - low + 1) as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// What one seed draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    seed: u64,
    /// Components per layer: 1 is a chain, 60 a wide, shallow stack.
    width: usize,
    /// How many layers back a dependency may reach.
    reach: usize,
    fan_in: (usize, usize),
    params: (usize, usize),
    /// Upstream outputs each component reads (at most its fan-in).
    reads: usize,
    /// Percent of a component's parameters `params.yaml` overrides.
    overridden: usize,
    pub written_order: bool,
    pub empty_roots: bool,
}

impl Spec {
    pub fn of(seed: u64) -> Spec {
        let mut rng = Rng::new(seed, 0);
        let width = [1, 2, 3, 5, 10, 20, 60][rng.range(0, 6)];
        let low = rng.range(1, 8);
        let low_params = rng.range(2, 46);
        Spec {
            seed,
            width,
            reach: rng.range(1, 4),
            fan_in: (low, rng.range(low, 8)),
            params: (low_params, rng.range(low_params, 46)),
            reads: rng.range(0, 3),
            overridden: [0, 50, 100][rng.range(0, 2)],
            written_order: rng.chance(50),
            empty_roots: rng.chance(50),
        }
    }

    /// One line saying what the seed drew, for the report.
    pub fn describe(&self) -> String {
        format!(
            "width {}, reach {} layer(s), fan-in {}–{}, {}–{} parameters, {} output(s) read, {} % overridden, {} order{}",
            self.width,
            self.reach,
            self.fan_in.0,
            self.fan_in.1,
            self.params.0,
            self.params.1,
            self.reads,
            self.overridden,
            if self.written_order { "written" } else { "derived" },
            if self.empty_roots { ", roots `depends: []`" } else { "" },
        )
    }

    fn component(&self, i: usize) -> Rng {
        Rng::new(self.seed, i as u64 + 1)
    }

    /// What each component depends on: components of the `reach` layers
    /// before its own, as many as its fan-in (fewer near the top).
    pub fn graph(&self, size: usize) -> Vec<Vec<usize>> {
        (0..size)
            .map(|i| {
                let layer = i / self.width;
                if layer == 0 {
                    return Vec::new();
                }
                let first = layer.saturating_sub(self.reach) * self.width;
                let last = layer * self.width;
                let mut rng = self.component(i);
                let fan_in = rng.range(self.fan_in.0, self.fan_in.1).min(last - first);
                let mut picked: Vec<usize> = Vec::with_capacity(fan_in);
                while picked.len() < fan_in {
                    let candidate = rng.range(first, last - 1);
                    if !picked.contains(&candidate) {
                        picked.push(candidate);
                    }
                }
                picked.sort_unstable();
                picked
            })
            .collect()
    }

    /// How many parameters component `i` declares.
    fn params_of(&self, i: usize) -> usize {
        let mut rng = self.component(i);
        rng.next();
        rng.range(self.params.0, self.params.1)
    }

    /// How many of component `i`'s parameters `params.yaml` overrides.
    pub fn overridden(&self, i: usize) -> usize {
        self.params_of(i) * self.overridden / 100
    }

    /// Component `i`'s manifest: its parameters, one reading each of the
    /// first `reads` outputs of what it depends on, one reading an
    /// upstream component's overridden parameter, and its output.
    pub fn manifest(&self, i: usize, depends: &[usize]) -> String {
        let mut manifest = format!(
            "version: 1\nkind: component\nmeta: {{name: c{i}}}\nparameters:\n- {{name: dns.domain, env: DOMAIN}}\n"
        );
        for k in 0..self.params_of(i) {
            let _ = writeln!(manifest, "- {{name: c{i}.p{k}, value: 'v{k}', env: P{k}}}");
        }
        for (j, up) in depends.iter().take(self.reads).enumerate() {
            let _ = writeln!(
                manifest,
                "- {{name: c{i}.up{j}, value: '${{c{up}.out}}', env: UP{j}}}"
            );
        }
        if let Some(up) = depends.iter().find(|&&d| self.overridden(d) > 0) {
            let _ = writeln!(
                manifest,
                "- {{name: c{i}.peer, value: '${{c{up}.p0}}-x', env: PEER}}"
            );
        }
        let _ = write!(manifest, "outputs:\n- {{name: c{i}.out, fromTfVar: out}}\n");
        manifest
    }
}

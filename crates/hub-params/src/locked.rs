//! One locked stack parameter, kept small: a stack at 10,000 components
//! holds 220,000–840,000 of them for a command's whole length.
//!
//! The name and the component are one shared text, the parameter's key
//! (`name` or `name|component`), which is also its key in
//! [`LockedParams`](crate::LockedParams); the rarely set fields (a `kind`,
//! an origin that carries text) are kept out of line; the declaration's
//! line and column are `u32`s.

use super::Origin;
use hub_manifest::diag::Location;
use std::path::Path;
use std::sync::Arc;
use yaml_serde::Value;

/// One locked stack parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct LockedParam {
    /// `name` or `name|component`, shared with the table's key.
    key: Arc<str>,
    pub value: Option<Value>,
    env: Box<str>,
    /// The template the value was expanded from, if any.
    expression: Option<Box<str>>,
    declared: Option<Declared>,
    /// A `kind` or an origin that carries text; `None` for most.
    rare: Option<Box<Rare>>,
    /// The length of `name` in `key`.
    name_len: u32,
    /// The origin when it carries no text (else in `rare`).
    origin: Plain,
    /// The name looks secret, or its expression read such a value.
    pub secret: bool,
}

#[derive(Debug, Clone, PartialEq)]
struct Rare {
    kind: Box<str>,
    origin: Origin,
}

/// Where a parameter was declared: a [`Location`] with 32-bit line and
/// column (0: none, else the number plus one).
#[derive(Debug, Clone, PartialEq)]
struct Declared {
    file: Arc<Path>,
    line: u32,
    column: u32,
}

impl Declared {
    fn new(at: Location) -> Self {
        let pack = |n: Option<usize>| n.map_or(0, |n| u32::try_from(n + 1).unwrap_or(u32::MAX));
        Declared {
            line: pack(at.line),
            column: pack(at.column),
            file: at.file,
        }
    }

    fn location(&self) -> Location {
        let unpack = |n: u32| (n != 0).then(|| n as usize - 1);
        Location {
            file: Arc::clone(&self.file),
            line: unpack(self.line),
            column: unpack(self.column),
        }
    }
}

/// The origins without text, stored in a byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plain {
    Value,
    Prompt,
    Default,
    EmptyAllowed,
    State,
    Implicit,
    Unset,
    /// In `rare`.
    Other,
}

impl Plain {
    fn of(origin: &Origin) -> Plain {
        match origin {
            Origin::Value => Plain::Value,
            Origin::Prompt => Plain::Prompt,
            Origin::Default => Plain::Default,
            Origin::EmptyAllowed => Plain::EmptyAllowed,
            Origin::State => Plain::State,
            Origin::Implicit => Plain::Implicit,
            Origin::Unset => Plain::Unset,
            Origin::FromEnv { .. } | Origin::FromFile { .. } | Origin::Found { .. } => Plain::Other,
        }
    }

    fn origin(self) -> &'static Origin {
        static VALUE: Origin = Origin::Value;
        static PROMPT: Origin = Origin::Prompt;
        static DEFAULT: Origin = Origin::Default;
        static EMPTY_ALLOWED: Origin = Origin::EmptyAllowed;
        static STATE: Origin = Origin::State;
        static IMPLICIT: Origin = Origin::Implicit;
        static UNSET: Origin = Origin::Unset;
        match self {
            Plain::Value => &VALUE,
            Plain::Prompt => &PROMPT,
            Plain::Default => &DEFAULT,
            Plain::EmptyAllowed => &EMPTY_ALLOWED,
            Plain::State => &STATE,
            Plain::Implicit => &IMPLICIT,
            // `Other` is always stored with its `rare` part.
            Plain::Unset | Plain::Other => &UNSET,
        }
    }
}

impl LockedParam {
    /// A parameter `name` of `component` (empty at stack level), without
    /// env, kind, expression or declaration, not secret.
    pub fn new(name: &str, component: &str, value: Option<Value>, origin: Origin) -> Self {
        let key: Arc<str> = Arc::from(super::qualified(name, component));
        LockedParam::keyed(key, name.len(), value, origin)
    }

    /// As [`LockedParam::new`], with its key (`name` or `name|component`)
    /// made already and the length of its name.
    pub(crate) fn keyed(
        key: Arc<str>,
        name_len: usize,
        value: Option<Value>,
        origin: Origin,
    ) -> Self {
        let name_len = u32::try_from(name_len.min(key.len())).unwrap_or(u32::MAX);
        let mut param = LockedParam {
            key,
            value,
            env: Box::default(),
            expression: None,
            declared: None,
            rare: None,
            name_len,
            origin: Plain::Value,
            secret: false,
        };
        param.set_origin(origin);
        param
    }

    pub fn with_env(mut self, env: &str) -> Self {
        self.env = env.into();
        self
    }

    pub fn with_kind(mut self, kind: &str) -> Self {
        if kind.is_empty() && self.origin != Plain::Other {
            self.rare = None;
        } else {
            let origin = self.origin().clone();
            self.rare = Some(Box::new(Rare {
                kind: kind.into(),
                origin,
            }));
        }
        self
    }

    pub fn with_expression(mut self, expression: Option<String>) -> Self {
        self.expression = expression.map(String::into_boxed_str);
        self
    }

    pub fn declared_at(mut self, at: Option<Location>) -> Self {
        self.declared = at.map(Declared::new);
        self
    }

    pub fn with_secret(mut self, secret: bool) -> Self {
        self.secret = secret;
        self
    }

    /// The key in [`LockedParams`](crate::LockedParams): `name` or
    /// `name|component`.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The same key, shared.
    pub fn shared_key(&self) -> Arc<str> {
        Arc::clone(&self.key)
    }

    pub fn name(&self) -> &str {
        self.key.get(..self.name_len as usize).unwrap_or(&self.key)
    }

    /// Empty for a stack-level parameter.
    pub fn component(&self) -> &str {
        self.key
            .get(self.name_len as usize + 1..)
            .unwrap_or_default()
    }

    pub fn kind(&self) -> &str {
        self.rare.as_ref().map_or("", |r| &r.kind)
    }

    pub fn env(&self) -> &str {
        &self.env
    }

    pub fn set_env(&mut self, env: &str) {
        self.env = env.into();
    }

    pub fn origin(&self) -> &Origin {
        match (&self.rare, self.origin) {
            (Some(rare), _) => &rare.origin,
            (None, plain) => plain.origin(),
        }
    }

    pub fn set_origin(&mut self, origin: Origin) {
        self.origin = Plain::of(&origin);
        let kind = self.rare.take().map(|r| r.kind).unwrap_or_default();
        if self.origin == Plain::Other || !kind.is_empty() {
            self.rare = Some(Box::new(Rare { kind, origin }));
        }
    }

    /// The template the value was expanded from, if any.
    pub fn expression(&self) -> Option<&str> {
        self.expression.as_deref()
    }

    /// Where it was declared.
    pub fn declared(&self) -> Option<Location> {
        self.declared.as_ref().map(Declared::location)
    }

    pub fn qualified_name(&self) -> String {
        self.key.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_locked_parameter_stays_small() {
        // 272 bytes before, with its name, component and key each a
        // `String` of its own; now 160 with one shared key.
        let size = std::mem::size_of::<LockedParam>();
        assert!(size <= 160, "LockedParam is {size} bytes");
    }

    #[test]
    fn its_parts_read_back_as_given() {
        let at = Location::at(Path::new("hub.yaml"), 12, 3);
        let p = LockedParam::new("dns.domain", "c1", None, Origin::Default)
            .with_env("DOMAIN")
            .with_kind("user")
            .with_expression(Some("${a}".into()))
            .declared_at(Some(at.clone()));
        assert_eq!(
            (p.key(), p.name(), p.component(), p.kind(), p.env()),
            ("dns.domain|c1", "dns.domain", "c1", "user", "DOMAIN")
        );
        assert_eq!(
            (p.origin(), p.expression()),
            (&Origin::Default, Some("${a}"))
        );
        assert_eq!(p.declared(), Some(at));
        let file = Location::file(Path::new("st"));
        let mut q =
            LockedParam::new("a|b", "", None, Origin::Value).declared_at(Some(file.clone()));
        assert_eq!((q.name(), q.component(), q.kind()), ("a|b", "", ""));
        assert_eq!(q.declared(), Some(file));
        let from_env = Origin::FromEnv {
            variable: "V".into(),
            overridden: true,
        };
        q.set_origin(from_env.clone());
        assert_eq!(q.origin(), &from_env);
        q.set_origin(Origin::State);
        assert_eq!((q.origin(), q.kind()), (&Origin::State, ""));
    }
}

//! What locking keeps of each stack parameter it declares, and how it
//! reads the declarations: borrowed from the stack, or taken from a list
//! it owns, each value moved rather than copied.

use crate::Origin;
use hub_manifest::{leaves, Parameter};
use std::borrow::Cow;
use yaml_serde::Value;

/// Each leaf of `params` (a group's members, else the parameter itself)
/// and the index of the top-level declaration it came from, borrowed
/// where it can be.
pub(super) fn flattened(params: &[Parameter]) -> impl Iterator<Item = (Cow<'_, Parameter>, usize)> {
    params.iter().enumerate().flat_map(|(index, param)| {
        let group = if param.parameters().is_empty() {
            Vec::new()
        } else {
            leaves(param, |_| {})
        };
        let plain = group.is_empty().then_some(Cow::Borrowed(param));
        plain
            .into_iter()
            .chain(group.into_iter().map(Cow::Owned))
            .map(move |param| (param, index))
    })
}

/// [`flattened`] of a list locking owns: each plain parameter moved, not
/// copied, and the list's room given back once the last one is taken.
pub(super) fn flattened_owned(
    params: Vec<Parameter>,
) -> impl Iterator<Item = (Cow<'static, Parameter>, usize)> {
    params.into_iter().enumerate().flat_map(|(index, param)| {
        let (plain, group) = if param.parameters().is_empty() {
            (Some(param), Vec::new())
        } else {
            (None, leaves(&param, |_| {}))
        };
        plain
            .into_iter()
            .chain(group)
            .map(move |param| (Cow::Owned(param), index))
    })
}

/// A settled declaration, kept until it is locked: its name and (nearly
/// always) its value went to the table, and its location is found again
/// when needed (`Locator`), so that the list of them (one per stack
/// parameter, at the largest moment of the lock) holds no more than this:
/// 16 bytes for a declaration with a plain value and no `kind` or `env`.
pub(super) struct Kept {
    /// Its place in the stack's list (a group's members share it).
    pub(super) index: u32,
    /// The length of its name (the start of its table key).
    pub(super) name_len: u32,
    pub(super) rare: Option<Box<KeptRare>>,
}

/// What few declarations have besides a value in the table.
pub(super) struct KeptRare {
    pub(super) kind: Box<str>,
    pub(super) env: Box<str>,
    pub(super) origin: Origin,
    /// Its own value, when the table does not hold it: an empty value
    /// that left hub's own in the table (`hub.deploymentId`), or a value
    /// that replaced an earlier declaration's of the same name. `None`:
    /// the table's entry holds it (or, once a later declaration of the
    /// name replaced it, the lock keeps it apart).
    pub(super) own: Option<Option<Value>>,
}

const _: () = assert!(std::mem::size_of::<Kept>() <= 16);

impl KeptRare {
    /// What a [`Kept`] without a rare part stands for.
    pub(super) fn plain() -> KeptRare {
        KeptRare {
            kind: Box::default(),
            env: Box::default(),
            origin: Origin::Value,
            own: None,
        }
    }
}

impl Kept {
    pub(super) fn new(index: usize, name_len: usize, rare: KeptRare) -> Kept {
        let plain = rare.kind.is_empty()
            && rare.env.is_empty()
            && rare.origin == Origin::Value
            && rare.own.is_none();
        let narrow = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Kept {
            index: narrow(index),
            name_len: narrow(name_len),
            rare: (!plain).then(|| Box::new(rare)),
        }
    }

    pub(super) fn index(&self) -> usize {
        self.index as usize
    }

    pub(super) fn env(&self) -> &str {
        self.rare.as_ref().map_or("", |r| &r.env)
    }

    pub(super) fn own(&self) -> Option<&Option<Value>> {
        self.rare.as_ref().and_then(|r| r.own.as_ref())
    }
}

/// The value of `param`: moved out when locking owns it, else copied.
pub(super) fn take_value(param: &mut Cow<'_, Parameter>) -> Option<Value> {
    match param {
        Cow::Borrowed(param) => param.value.clone(),
        Cow::Owned(param) => param.value.take(),
    }
}

/// The `kind` and `env` of `param`: moved out when locking owns it,
/// else copied.
pub(super) fn take_kind_and_env(param: &mut Cow<'_, Parameter>) -> (Box<str>, Box<str>) {
    match param {
        Cow::Borrowed(param) => (param.kind.as_str().into(), param.env.as_str().into()),
        Cow::Owned(param) => (
            std::mem::take(&mut param.kind).into_boxed_str(),
            std::mem::take(&mut param.env).into_boxed_str(),
        ),
    }
}

//! What elaborate knows about an elaborated stack.

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provenance {
    /// The stack manifest and every file elaborate read, as absolute paths.
    pub sources: Vec<std::path::PathBuf>,
    /// The stack's folder, against which relative component folders resolve.
    pub stack_dir: Option<std::path::PathBuf>,
    /// `lifecycle.order` was derived from `depends` by elaborate.
    pub order_derived: bool,
}

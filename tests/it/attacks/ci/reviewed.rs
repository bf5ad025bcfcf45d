//! See [`super`]: this class's rows are added by its fix.

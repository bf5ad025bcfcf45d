//! The binary's allocator: mimalloc (why: docs/src/development.md,
//! "Dependencies"), told to give memory it no longer uses back to the
//! system after 10 ms rather than its default second.
//!
//! A large stack's commands go through phases that each build and drop
//! tens of megabytes (decoding the state, locking the parameters, the
//! plan's walk). With a second's delay, the pages a phase freed are still
//! held while the next one allocates fresh ones, and resident memory
//! peaks 70–90 MB above what the program holds
//! (`benches/MEMORY_RESULTS.md`). `MIMALLOC_PURGE_DELAY`, when set, wins.

use std::os::raw::{c_int, c_long};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc 3's `mi_option_t` (its
/// `include/mimalloc.h`; `libmimalloc-sys` names no constant for it).
const PURGE_DELAY: c_int = 15;

/// What hub sets it to, in milliseconds.
const PURGE_AFTER_MS: c_long = 10;

extern "C" {
    fn mi_option_set(option: c_int, value: c_long);
    #[cfg(test)]
    fn mi_option_get(option: c_int) -> c_long;
}

/// Sets the allocator's options, unless the environment does.
pub(crate) fn tune() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: `mi_option_set` stores an integer in mimalloc's table of
    // options (linked in by the `mimalloc` crate, whose C library defines
    // it with this signature); any value is valid for this option, and it
    // is read atomically by the threads that purge.
    unsafe { mi_option_set(PURGE_DELAY, PURGE_AFTER_MS) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The number is the purge delay's: its value is the variable's when
    /// `MIMALLOC_PURGE_DELAY` is set (and `tune` leaves it), else its
    /// default (1,000 ms in mimalloc 3, no other option's), which `tune`
    /// sets to 10 ms.
    #[test]
    fn the_option_set_is_the_purge_delay() {
        // SAFETY: reads and writes of an option, as in `tune`.
        let before = unsafe { mi_option_get(PURGE_DELAY) };
        let given = std::env::var("MIMALLOC_PURGE_DELAY").ok();
        let expected_after = match given.as_deref().map(str::parse::<c_long>) {
            Some(Ok(value)) => {
                assert_eq!(before, value, "not the purge delay the variable sets");
                value
            }
            Some(Err(_)) => before,
            None => {
                assert_eq!(before, 1000, "not the purge delay's default");
                PURGE_AFTER_MS
            }
        };
        tune();
        // SAFETY: as above.
        assert_eq!(unsafe { mi_option_get(PURGE_DELAY) }, expected_after);
    }
}

//! Work on the parts of one render shared with idle processors.
//!
//! A fold of a large state renders thousands of component entries, each
//! apart from the others (its own value, its own anchors), while the run
//! that asked for it waits: before the first component starts, and after
//! the last one has ended, when the other processors have nothing to do.

/// Fewer items than this are not worth a thread.
const SMALLEST_SHARE: usize = 16;

/// More threads than this gain little: the items' text is then written
/// out by one thread anyway.
const MOST_THREADS: usize = 4;

/// `work` of each item, in the items' order, shared between this thread
/// and up to three more when the machine has the processors. A helper
/// that cannot be started (a process limit) or panicked leaves its share
/// to this thread, which then does it as a single-threaded run would.
pub(super) fn map<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cpus
        .min(MOST_THREADS)
        .min(items.len() / SMALLEST_SHARE)
        .max(1);
    if threads == 1 {
        return items.iter().map(&work).collect();
    }
    let share = items.len().div_ceil(threads);
    let shares: Vec<&[T]> = items.chunks(share).collect();
    let work = &work;
    std::thread::scope(|scope| {
        let helpers: Vec<_> = shares[1..]
            .iter()
            .map(|&items| {
                std::thread::Builder::new()
                    .name("hub-render".into())
                    .spawn_scoped(scope, move || items.iter().map(work).collect::<Vec<R>>())
            })
            .collect();
        let mut done: Vec<R> = Vec::with_capacity(items.len());
        done.extend(shares[0].iter().map(work));
        for (&items, helper) in shares[1..].iter().zip(helpers) {
            match helper.ok().and_then(|helper| helper.join().ok()) {
                Some(share) => done.extend(share),
                None => done.extend(items.iter().map(work)),
            }
        }
        done
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::Mutex;

    #[test]
    fn every_item_is_worked_on_once_and_kept_in_order() {
        for count in [0, 1, 15, 16, 33, 64, 1000] {
            let items: Vec<usize> = (0..count).collect();
            let threads = Mutex::new(HashSet::new());
            let done = map(&items, |i| {
                threads
                    .lock()
                    .expect("not poisoned")
                    .insert(std::thread::current().id());
                i * 2
            });
            assert_eq!(done, items.iter().map(|i| i * 2).collect::<Vec<_>>());
            let used = threads.lock().expect("not poisoned").len();
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
            if count >= 2 * SMALLEST_SHARE && cpus > 1 {
                assert!(used > 1, "{count} items on {used} thread(s)");
            } else {
                assert!(used <= 1, "{count} items on {used} threads");
            }
        }
    }

    #[test]
    fn a_share_whose_helper_panicked_is_done_again_here() {
        let items: Vec<usize> = (0..64).collect();
        let main = std::thread::current().id();
        let done = map(&items, |i| {
            if std::thread::current().id() != main && *i == 63 {
                panic!("a helper's failure");
            }
            i + 1
        });
        assert_eq!(done, (1..=64).collect::<Vec<_>>());
    }
}

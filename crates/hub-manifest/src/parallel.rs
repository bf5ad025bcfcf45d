//! Independent pieces of work shared with idle processors, the results
//! kept in the items' order: the component folders an elaboration reads,
//! each component's edges in the deploy graph, the implementations a run
//! looks for and the preflight's checks of each component, the component
//! entries and the stack parameters a state write renders.

use std::sync::atomic::{AtomicUsize, Ordering};

/// How far a [`map`] spreads.
#[derive(Debug, Clone, Copy)]
pub struct Spread {
    /// Items per thread at least: fewer are not worth a thread.
    pub smallest_share: usize,
    /// Threads at most, this one included.
    pub most_threads: usize,
}

/// `work` of each item, in the items' order, on this thread and as many
/// helpers as the processors and `spread` allow; the items are handed out
/// one at a time, so uneven ones balance. An item a helper did not give
/// back (it could not start, a process limit, or it panicked) is done
/// again here, as a single-threaded run would.
pub fn map<T: Sync, R: Send>(items: &[T], spread: Spread, work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cpus
        .min(spread.most_threads)
        .min(items.len() / spread.smallest_share.max(1))
        .max(1);
    if threads == 1 {
        return items.iter().map(work).collect();
    }
    let next = AtomicUsize::new(0);
    let take = || {
        let mut done = Vec::new();
        loop {
            let at = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(at) else {
                break done;
            };
            done.push((at, work(item)));
        }
    };
    let mut slots: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .name("hub-parallel".into())
                    .spawn_scoped(scope, take)
                    .ok()
            })
            .collect();
        let mut finished = vec![take()];
        finished.extend(helpers.into_iter().filter_map(|helper| helper.join().ok()));
        for (at, done) in finished.into_iter().flatten() {
            slots[at] = Some(done);
        }
    });
    slots
        .into_iter()
        .zip(items)
        .map(|(slot, item)| slot.unwrap_or_else(|| work(item)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::{Condvar, Mutex};
    use std::time::Duration;

    const SPREAD: Spread = Spread {
        smallest_share: 16,
        most_threads: 4,
    };

    fn cpus() -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }

    #[test]
    fn every_item_is_worked_on_once_and_kept_in_order() {
        for count in [0, 1, 15, 31, 32, 64, 1000] {
            let items: Vec<usize> = (0..count).collect();
            let threads = Mutex::new(HashSet::new());
            let done = map(&items, SPREAD, |i| {
                let id = std::thread::current().id();
                threads.lock().expect("not poisoned").insert(id);
                i * 2
            });
            assert_eq!(done, items.iter().map(|i| i * 2).collect::<Vec<_>>());
            if count < 2 * SPREAD.smallest_share || cpus() == 1 {
                let used = threads.lock().expect("not poisoned").len();
                assert!(used <= 1, "{count} items on {used} threads");
            }
        }
    }

    /// Each item waits (5 s at most) until a second thread has taken one:
    /// with two processors and enough items, a helper does.
    #[test]
    fn enough_items_are_shared_with_a_helper() {
        if cpus() == 1 {
            return;
        }
        let items: Vec<usize> = (0..64).collect();
        let seen = (Mutex::new(HashSet::new()), Condvar::new());
        map(&items, SPREAD, |_| {
            let (threads, arrived) = &seen;
            let mut threads = threads.lock().expect("not poisoned");
            threads.insert(std::thread::current().id());
            arrived.notify_all();
            let wait = Duration::from_secs(5);
            drop(arrived.wait_timeout_while(threads, wait, |t| t.len() < 2));
        });
        assert!(seen.0.lock().expect("not poisoned").len() > 1);
    }

    #[test]
    fn an_item_whose_helper_panicked_is_done_again_here() {
        let items: Vec<usize> = (0..64).collect();
        let main = std::thread::current().id();
        let done = map(&items, SPREAD, |i| {
            if std::thread::current().id() != main && *i % 2 == 1 {
                panic!("a helper's failure");
            }
            i + 1
        });
        assert_eq!(done, (1..=64).collect::<Vec<_>>());
    }
}

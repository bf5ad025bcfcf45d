//! The scheduler's loop of a run: the components that are ready are
//! handed out, their processes (and their waits for readiness) run on
//! threads, each one's end is settled on the run's thread.

use super::{Ended, Job, JobResult, Prepared, Run, Step, Stop, HEARTBEAT};
use crate::child::interrupt::Interrupts;
use crate::run::hooks;
use crate::run::logs_ahead::LogsAhead;
use crate::run::ready;
use crate::run::recorder::Recorder;
use crate::run::retry;
use hub_manifest::ReadyCondition;
use hub_plan::order::scheduler::Scheduler;
use hub_state as state;
use indexmap::IndexMap;
use std::sync::mpsc;
use std::thread::Scope;
use std::time::Instant;

/// What the scheduler's loop keeps between its turns.
pub(super) struct Turns<'a> {
    pub(super) scheduler: Scheduler,
    /// How many components are selected, and how many were handed out.
    pub(super) total: usize,
    pub(super) started: usize,
    /// Why the run stops handing out components, once it does.
    pub(super) stop: Option<Stop>,
    /// The components handed out and not settled, with when they started.
    pub(super) running: IndexMap<String, Instant>,
    /// Components whose turn ended, to settle.
    pub(super) steps: Vec<(String, Step)>,
    /// Components whose process starts once their checkpoints are written.
    pub(super) starting: Vec<(String, Box<Job<'a>>)>,
    /// What their processes wait for: their checkpoints on disk.
    pub(super) flush: state::Flush,
}

impl<'a> Run<'a> {
    /// The scheduler's loop: hands out the components that are ready,
    /// starts their processes (and their waits for readiness) on threads,
    /// settles each one's end; until nothing runs.
    pub(super) fn run_components(
        &mut self,
        sink: &Recorder,
        logs_ahead: Option<&LogsAhead>,
    ) -> Turns<'a> {
        let mut turns = Turns {
            scheduler: self.setup.plan.scheduler(self.options.concurrency.max(1)),
            total: self.setup.plan.selected.len(),
            started: 0,
            stop: None,
            running: IndexMap::new(),
            steps: Vec::new(),
            starting: Vec::new(),
            flush: state::Flush::default(),
        };
        let interrupts = self.host.interrupts;
        std::thread::scope(|threads| {
            let (done, finished) = mpsc::channel::<(usize, Ended)>();
            let mut pool = Pool::new(threads, done, sink, interrupts);
            loop {
                self.hand_out(&mut turns, logs_ahead);
                for (name, job) in turns.starting.drain(..) {
                    pool.give(Task::Process(name, job, turns.flush.clone()));
                }
                let progressed = !turns.steps.is_empty();
                self.settle_steps(&mut turns, &mut |name, conditions| {
                    pool.give(Task::Ready(name, conditions))
                });
                if progressed {
                    continue;
                }
                if turns.running.is_empty() {
                    break;
                }
                match finished.recv_timeout(HEARTBEAT) {
                    Ok((worker, ended)) => {
                        pool.returned(worker);
                        self.ended(ended, &mut turns);
                        // Those that ended meanwhile are settled with it:
                        // the components they free start together, their
                        // checkpoints written and flushed once.
                        while let Ok((worker, ended)) = finished.try_recv() {
                            pool.returned(worker);
                            self.ended(ended, &mut turns);
                        }
                    }
                    Err(_) => self.heartbeat(&turns.running),
                }
            }
            // The workers end once their channels close; the scope joins them.
            pool.close();
        });
        turns
    }

    /// Hands out the components that are ready (unless the run stops):
    /// each one's turn is prepared here; those with a process to run are
    /// started once their checkpoints are written.
    fn hand_out(&mut self, turns: &mut Turns<'a>, logs_ahead: Option<&LogsAhead>) {
        if turns.stop.is_none() {
            if let Some(signal) = self.interrupt_signal() {
                turns.stop = Some(Stop::Interrupted(None, signal));
            }
        }
        while turns.stop.is_none() && turns.steps.is_empty() {
            let Some(name) = turns.scheduler.next_ready() else {
                break;
            };
            turns.started += 1;
            if let Some(logs) = logs_ahead {
                logs.reached(turns.started);
            }
            self.announce_start(&name, turns.started, turns.total);
            turns.running.insert(name.clone(), Instant::now());
            let prepared = self.component(&name);
            self.show_warnings();
            match prepared {
                Prepared::Ended(step) => turns.steps.push((name, step)),
                Prepared::Run(job) => turns.starting.push((name, job)),
            }
        }
        match self.write_checkpoints() {
            Ok(flush) => turns.flush = flush,
            Err(error) => {
                for (name, _) in turns.starting.drain(..) {
                    let step = self.fail(&name, &format!("not started: {error}"), None);
                    turns.steps.push((name, step));
                }
                turns.stop = turns.stop.take().or(Some(Stop::Fatal(error)));
            }
        }
    }

    /// Settles the components whose turn ended; a deployed one with ready
    /// conditions waits for them first (`await_ready`).
    fn settle_steps(
        &mut self,
        turns: &mut Turns<'a>,
        await_ready: &mut dyn FnMut(String, Vec<ReadyCondition>),
    ) {
        let steps = std::mem::take(&mut turns.steps);
        for (name, step) in steps {
            if let Step::AwaitReady(conditions) = step {
                await_ready(name, conditions);
                continue;
            }
            let clock = turns
                .running
                .shift_remove(&name)
                .unwrap_or_else(Instant::now);
            turns.scheduler.finish(&name);
            let outcome = self.settle(&name, step, clock.elapsed(), &mut turns.scheduler);
            self.show_warnings();
            turns.stop = match (turns.stop.take(), outcome) {
                // The signal was seen before the component it
                // stopped ended: the message names the component.
                (Some(Stop::Interrupted(None, _)), Some(named @ Stop::Interrupted(..))) => {
                    Some(named)
                }
                (stop, outcome) => stop.or(outcome),
            };
        }
    }

    /// A component's thread ended: its process, or its wait for readiness.
    fn ended(&mut self, ended: Ended<'a>, turns: &mut Turns<'a>) {
        let step = match ended.result {
            JobResult::Process(job, result) => self.ran(&ended.name, job, result),
            JobResult::NotStarted(error) => {
                let step = self.fail(&ended.name, &format!("not started: {error}"), None);
                turns.stop = turns.stop.take().or(Some(Stop::Fatal(error.into())));
                step
            }
            JobResult::Ready(Ok(())) => self.succeeded(&ended.name),
            JobResult::Ready(Err(reason)) => self.fail(&ended.name, &reason, None),
        };
        turns.steps.push((ended.name, step));
    }
}

/// What a worker of the pool does: a component's process (with its hooks
/// and retries), or a deployed component's wait for its ready conditions.
enum Task<'a> {
    /// Started once the flush of its checkpoint is made.
    Process(String, Box<Job<'a>>, state::Flush),
    Ready(String, Vec<ReadyCondition>),
}

/// The threads that run the components' processes and readiness waits,
/// each fed by a channel of its own. A task goes to an idle worker, or to
/// a new one when every worker is busy, so a task never waits for a
/// worker: the pool grows to the most tasks running at once (at most
/// `-j`, which the scheduler enforces), and each worker (its stack, its
/// allocator's heap, its read buffer) serves many components instead of
/// one thread being made and torn down per component.
struct Pool<'scope, 'env, 'a> {
    threads: &'scope Scope<'scope, 'env>,
    /// Each worker's channel, by its number.
    workers: Vec<mpsc::Sender<Task<'a>>>,
    /// The workers whose last task's end the run's thread received.
    idle: Vec<usize>,
    done: mpsc::Sender<(usize, Ended<'a>)>,
    sink: &'env Recorder<'env>,
    interrupts: &'env Interrupts,
}

impl<'scope, 'env: 'scope, 'a: 'env> Pool<'scope, 'env, 'a> {
    fn new(
        threads: &'scope Scope<'scope, 'env>,
        done: mpsc::Sender<(usize, Ended<'a>)>,
        sink: &'env Recorder<'env>,
        interrupts: &'env Interrupts,
    ) -> Self {
        Pool {
            threads,
            workers: Vec::new(),
            idle: Vec::new(),
            done,
            sink,
            interrupts,
        }
    }

    /// Runs `task` on an idle worker, or on a new one when none is idle.
    fn give(&mut self, task: Task<'a>) {
        let worker = match self.idle.pop() {
            Some(worker) => worker,
            None => self.start_worker(),
        };
        // A worker takes tasks until its channel closes (`close`).
        let _ = self.workers[worker].send(task);
    }

    fn start_worker(&mut self) -> usize {
        let number = self.workers.len();
        let (tasks, inbox) = mpsc::channel();
        let done = self.done.clone();
        let (sink, interrupts) = (self.sink, self.interrupts);
        self.threads
            .spawn(move || work(number, &inbox, &done, sink, interrupts));
        self.workers.push(tasks);
        number
    }

    /// Worker `worker`'s task ended: it waits for the next one.
    fn returned(&mut self, worker: usize) {
        self.idle.push(worker);
    }

    /// No task follows: each worker ends when its channel closes.
    fn close(&mut self) {
        self.workers.clear();
    }
}

/// A worker: takes tasks until its channel closes; each one's end is sent
/// to the run's thread with the worker's number.
fn work<'a>(
    number: usize,
    inbox: &mpsc::Receiver<Task<'a>>,
    done: &mpsc::Sender<(usize, Ended<'a>)>,
    sink: &Recorder,
    interrupts: &Interrupts,
) {
    while let Ok(task) = inbox.recv() {
        let ended = match task {
            Task::Process(name, job, flush) => match flush.wait() {
                Ok(()) => run_job(name, job, sink, interrupts),
                Err(error) => Ended {
                    name,
                    result: JobResult::NotStarted(error),
                },
            },
            Task::Ready(name, conditions) => Ended {
                name,
                result: JobResult::Ready(ready::wait_resolved(&conditions, interrupts)),
            },
        };
        // The receiver lives until every task has ended.
        let _ = done.send((number, ended));
    }
}

/// A component's process, with its hooks and retries, then its folder's
/// digest when it succeeded.
fn run_job<'a>(
    name: String,
    mut job: Box<Job<'a>>,
    sink: &Recorder,
    interrupts: &Interrupts,
) -> Ended<'a> {
    if let (Some(marks), Some(log)) = (&job.log_marks, &job.invocation.log_file) {
        marks.mark(&name, log);
    }
    let (result, attempts) = retry::run(job.retry.as_ref(), &name, sink, interrupts, || {
        hooks::run_around(
            &job.hooks,
            Some(&job.invocation),
            job.limit,
            &job.masker,
            sink,
            interrupts,
        )
    });
    job.attempts = attempts;
    if result.succeeded() {
        job.hash_folder();
    }
    Ended {
        name,
        result: JobResult::Process(job, result),
    }
}

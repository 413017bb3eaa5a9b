//! Symbol data loaded on another thread before the walk asks for it.
//!
//! A walk meets the kernel's symbols and a library's debug info at its first sample in
//! them, and waits for them to load (tens of milliseconds for kallsyms or libc's
//! compressed DWARF). When the files are known beforehand (the recording lists the files
//! samples hit), one thread loads them in turn while the walk goes on. A load the walk
//! needs before that thread has started it is done by the walk itself, so two loads run
//! at once and the walk never waits for a queue.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};

type Job<T> = Box<dyn FnOnce() -> T + Send>;

enum State<T> {
    /// Nobody has started it.
    Waiting(Job<T>),
    /// A thread is making it.
    Running,
    Done(T),
    /// Taken, or the read-ahead thread failed while making it.
    Gone,
}

struct Slot<T> {
    state: Mutex<State<T>>,
    done: Condvar,
}

impl<T> Slot<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // A job that panicked never holds the lock (it runs unlocked).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A value that may be being made on the read-ahead thread.
pub(crate) struct Pending<T>(Option<Arc<Slot<T>>>);

impl<T> Default for Pending<T> {
    fn default() -> Self {
        Pending(None)
    }
}

impl<T> std::fmt::Debug for Pending<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Pending" } else { "None" })
    }
}

impl<T> Pending<T> {
    /// The value: made here if the read-ahead thread has not started it, waited for if
    /// it is making it. `None` when nothing was read ahead, it was taken already, or the
    /// thread failed making it (the caller then loads it itself).
    pub(crate) fn take(&self) -> Option<T> {
        let slot = self.0.as_ref()?;
        let mut state = slot.lock();
        loop {
            match std::mem::replace(&mut *state, State::Gone) {
                State::Waiting(job) => {
                    drop(state);
                    return Some(job());
                }
                State::Running => {
                    *state = State::Running;
                    state = slot.done.wait(state).unwrap_or_else(|e| e.into_inner());
                }
                State::Done(v) => return Some(v),
                State::Gone => return None,
            }
        }
    }
}

/// Jobs gathered for one read-ahead thread, run in the order given.
#[derive(Default)]
pub(crate) struct ReadAhead {
    jobs: Vec<Box<dyn FnOnce() + Send>>,
}

impl ReadAhead {
    /// Adds a job making the value of the returned `Pending`.
    pub(crate) fn push<T: Send + 'static>(
        &mut self,
        make: impl FnOnce() -> T + Send + 'static,
    ) -> Pending<T> {
        let slot = Arc::new(Slot {
            state: Mutex::new(State::Waiting(Box::new(make))),
            done: Condvar::new(),
        });
        let ours = Arc::clone(&slot);
        self.jobs.push(Box::new(move || run(&ours)));
        Pending(Some(slot))
    }

    /// Starts the thread. It stops before its next job once the returned handle is
    /// dropped (its owner is gone: nobody will take the results). If the thread cannot
    /// be started, each value is made where it is first needed.
    pub(crate) fn start(self) -> Option<Arc<()>> {
        if self.jobs.is_empty() {
            return None;
        }
        let alive = Arc::new(());
        let owner: Weak<()> = Arc::downgrade(&alive);
        let spawned = std::thread::Builder::new()
            .name("perfdata-read-ahead".into())
            .spawn(move || {
                for job in self.jobs {
                    if owner.strong_count() == 0 {
                        return;
                    }
                    job();
                }
            });
        spawned.ok().map(|_| alive)
    }
}

/// Makes a slot's value on the read-ahead thread, unless the walk has started it.
fn run<T>(slot: &Slot<T>) {
    let job = {
        let mut state = slot.lock();
        match std::mem::replace(&mut *state, State::Running) {
            State::Waiting(job) => job,
            other => {
                *state = other;
                return;
            }
        }
    };
    // If the job panics, whoever waits for it is told it is gone.
    struct Failed<'a, T>(&'a Slot<T>);
    impl<T> Drop for Failed<'_, T> {
        fn drop(&mut self) {
            *self.0.lock() = State::Gone;
            self.0.done.notify_all();
        }
    }
    let failed = Failed(slot);
    let value = job();
    std::mem::forget(failed);
    *slot.lock() = State::Done(value);
    slot.done.notify_all();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::sync_channel;

    #[test]
    fn results_arrive_in_their_pending_and_once() {
        let mut ahead = ReadAhead::default();
        let a = ahead.push(|| 1u32);
        let b = ahead.push(|| "two".to_string());
        let _alive = ahead.start().expect("a thread");
        assert_eq!(b.take().as_deref(), Some("two"));
        assert_eq!(a.take(), Some(1));
        assert_eq!(a.take(), None, "taken already");
    }

    #[test]
    fn nothing_pending_gives_none() {
        let p: Pending<u8> = Pending::default();
        assert_eq!(p.take(), None);
        assert!(ReadAhead::default().start().is_none());
    }

    #[test]
    fn a_value_needed_before_the_thread_reaches_it_is_made_by_the_caller() {
        let (started_tx, started_rx) = sync_channel::<()>(1);
        let (go_tx, go_rx) = sync_channel::<()>(0);
        let mut ahead = ReadAhead::default();
        let first = ahead.push(move || {
            started_tx.send(()).unwrap();
            go_rx.recv().unwrap();
            std::thread::current().id()
        });
        let second = ahead.push(|| std::thread::current().id());
        let _alive = ahead.start();
        started_rx.recv().unwrap();
        // The thread is busy with `first`: `second` is made here.
        assert_eq!(second.take(), Some(std::thread::current().id()));
        go_tx.send(()).unwrap();
        assert_ne!(first.take(), Some(std::thread::current().id()));
    }

    #[test]
    fn a_job_that_panics_leaves_its_value_to_the_caller() {
        let (started_tx, started_rx) = sync_channel::<()>(1);
        let mut ahead = ReadAhead::default();
        let p: Pending<u8> = ahead.push(move || {
            started_tx.send(()).unwrap();
            panic!("a job that fails")
        });
        let _alive = ahead.start();
        started_rx.recv().unwrap();
        assert_eq!(p.take(), None);
    }

    #[test]
    fn jobs_stop_when_the_owner_is_gone() {
        let (started_tx, started_rx) = sync_channel::<()>(1);
        let (go_tx, go_rx) = sync_channel::<()>(0);
        let mut ahead = ReadAhead::default();
        let first = ahead.push(move || {
            started_tx.send(()).unwrap();
            go_rx.recv().unwrap();
            std::thread::current().id()
        });
        let second = ahead.push(|| std::thread::current().id());
        let alive = ahead.start();
        started_rx.recv().unwrap();
        drop(alive);
        go_tx.send(()).unwrap();
        assert_ne!(first.take(), Some(std::thread::current().id()));
        // The thread stopped before `second`: it is made here when asked for.
        assert_eq!(second.take(), Some(std::thread::current().id()));
    }
}

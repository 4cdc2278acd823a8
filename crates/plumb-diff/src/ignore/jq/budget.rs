//! The budget one jq evaluation runs under, and how it is stopped.
//!
//! jaq has no cancellation and no recursion limit, but it clones its evaluation context at
//! every step that can loop or recurse (function calls, pipes, `,`, each `reduce`/`foreach`
//! element), and the context carries Plumb's data type ([`super::data::Bounded`]). That clone calls
//! [`tick`], which counts the step against the fuel, checks the stack left on this thread and,
//! every [`CLOCK_EVERY`] steps, the deadline. When one runs out, [`tick`] unwinds out of jaq
//! with [`std::panic::resume_unwind`] (which does not run the panic hook, so nothing is printed)
//! and [`run`] catches it: the computation really stops, on the caller's thread, and everything
//! it built is dropped. A panic inside jaq itself is caught the same way and becomes an error.
//!
//! Steps do not bound memory: `[.[], .[]]` doubles an array in one step, so a `reduce` of 40
//! steps asks for 2^40 elements (before this check it took the process down). Every step reads
//! the clock, and at most once per [`MEMORY_EVERY`] it reads the process's resident memory:
//! an evaluation that has grown it by more than [`MEMORY_GROWTH`] is stopped. The growth is
//! measured for the whole process (Rust has no per-thread allocation count without a global
//! allocator), so the bound is generous; one step can still double what the last check saw,
//! which keeps the peak within a few times the bound.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::time::{Duration, Instant};

/// Growth of the process's resident memory one evaluation may cause.
pub(crate) const MEMORY_GROWTH: u64 = 256 * 1024 * 1024;

/// Time between two reads of the resident memory.
const MEMORY_EVERY: Duration = Duration::from_millis(1);

/// Limits of one evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Wall-clock time.
    pub(crate) timeout: Duration,
    /// Evaluation steps.
    pub(crate) fuel: u64,
    /// Stack that must stay free on the evaluating thread; deeper recursion stops.
    pub(crate) stack_reserve: usize,
}

/// Why an evaluation was stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The deadline passed.
    Timeout(Duration),
    /// The step budget ran out.
    Fuel(u64),
    /// Recursion reached the stack reserve.
    Stack,
    /// The process's resident memory grew by more than this many bytes.
    Memory(u64),
    /// jaq panicked; the message, which names no value of the input.
    Panic(String),
}

#[derive(Debug, Clone, Copy)]
struct Active {
    left: u64,
    used: u64,
    limits: Limits,
    deadline: Instant,
    /// Resident memory when the evaluation began (None: not readable here).
    rss_start: Option<u64>,
    next_memory_check: Instant,
}

thread_local! {
    static ACTIVE: Cell<Option<Active>> = const { Cell::new(None) };
}

/// Counts one step of the evaluation running on this thread (none: no effect) and stops it
/// when a limit is reached.
pub(crate) fn tick() {
    // A second unwind while the first is in flight would abort the process.
    if std::thread::panicking() {
        return;
    }
    let Some(mut active) = ACTIVE.with(Cell::get) else {
        return;
    };
    let stop = active.step();
    ACTIVE.with(|a| a.set(Some(active)));
    if let Some(stop) = stop {
        resume_unwind(Box::new(stop));
    }
}

impl Active {
    fn step(&mut self) -> Option<Stop> {
        if self.left == 0 {
            return Some(Stop::Fuel(self.limits.fuel));
        }
        self.left -= 1;
        self.used += 1;
        if stacker::remaining_stack().is_some_and(|r| r < self.limits.stack_reserve) {
            return Some(Stop::Stack);
        }
        // Every step: a step can take long (it can copy a large value), so counting steps
        // between clock reads would let a few slow ones run far past the deadline.
        let now = Instant::now();
        if now >= self.deadline {
            return Some(Stop::Timeout(self.limits.timeout));
        }
        if let Some(start) = self.rss_start
            && now >= self.next_memory_check
        {
            self.next_memory_check = now + MEMORY_EVERY;
            if resident_bytes().is_some_and(|rss| rss.saturating_sub(start) > MEMORY_GROWTH) {
                return Some(Stop::Memory(MEMORY_GROWTH));
            }
        }
        None
    }
}

/// Runs `f` under `limits` on this thread.
pub(crate) fn run<T>(limits: Limits, f: impl FnOnce() -> T) -> Result<T, Stop> {
    let outcome = {
        let now = Instant::now();
        let _armed = Arm::new(Active {
            left: limits.fuel,
            used: 0,
            limits,
            deadline: now + limits.timeout,
            rss_start: resident_bytes(),
            next_memory_check: now + MEMORY_EVERY,
        });
        catch_unwind(AssertUnwindSafe(f))
    };
    outcome.map_err(|payload| match payload.downcast::<Stop>() {
        Ok(stop) => *stop,
        Err(payload) => Stop::Panic(
            payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_string()),
        ),
    })
}

/// The process's resident memory in bytes, from `/proc/self/status` (Linux); None elsewhere.
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Makes a budget the one of this thread while it lives, restoring the previous one after
/// (also when the evaluation unwinds).
struct Arm {
    previous: Option<Active>,
}

impl Arm {
    fn new(active: Active) -> Self {
        let previous = ACTIVE.with(|a| a.replace(Some(active)));
        Self { previous }
    }
}

impl Drop for Arm {
    fn drop(&mut self) {
        ACTIVE.with(|a| a.set(self.previous));
    }
}

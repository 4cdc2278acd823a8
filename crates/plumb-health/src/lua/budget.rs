//! The budget of one evaluation: instructions, wall clock and memory, charged by the interpreter's
//! hook and by the bounded string functions, and which limit stopped the script.

use std::cell::Cell;
use std::time::{Duration, Instant};

use super::limits::LuaLimits;

/// Instructions between two checks of the budget and the clock.
pub(super) const HOOK_STEP: u32 = 1_000;
/// Which limit stopped a script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LimitHit {
    Time(Duration),
    Instructions(u64),
    Memory(usize),
}

impl LimitHit {
    pub(super) fn message(self) -> String {
        match self {
            LimitHit::Time(d) => {
                format!("Lua health script stopped: it ran longer than its time limit of {d:?}")
            }
            LimitHit::Instructions(n) => {
                format!("Lua health script stopped: it exceeded its budget of {n} instructions")
            }
            LimitHit::Memory(bytes) => format!(
                "Lua health script stopped: it exceeded its memory limit of {} MiB",
                bytes / (1024 * 1024)
            ),
        }
    }
}

/// The per-evaluation budget the hook reads (and the bounded string functions charge).
pub(crate) struct Budget {
    pub(super) deadline: Cell<Instant>,
    pub(super) memory_bytes: Cell<usize>,
    pub(super) wall_time: Cell<Duration>,
    pub(super) budget: Cell<u64>,
    pub(super) left: Cell<u64>,
    pub(super) hit: Cell<Option<LimitHit>>,
}

impl Budget {
    pub(super) fn arm(&self, limits: &LuaLimits) {
        self.deadline.set(Instant::now() + limits.wall_time);
        self.wall_time.set(limits.wall_time);
        self.budget.set(limits.instructions);
        self.left.set(limits.instructions);
        self.memory_bytes.set(limits.memory_bytes);
        self.hit.set(None);
    }

    /// The memory cap of the running evaluation.
    pub(super) fn memory_bytes(&self) -> usize {
        self.memory_bytes.get()
    }

    /// Records that `hit` stopped the evaluation; the error to raise.
    pub(super) fn stop(&self, hit: LimitHit) -> mlua::Error {
        if self.hit.get().is_none() {
            self.hit.set(Some(hit));
        }
        mlua::Error::runtime(hit.message())
    }

    /// Charges [`HOOK_STEP`] instructions and checks the clock: the limit hit, if any.
    pub(super) fn tick(&self) -> Option<LimitHit> {
        if self.hit.get().is_none() {
            let left = self.left.get().saturating_sub(u64::from(HOOK_STEP));
            self.left.set(left);
            if left == 0 {
                self.hit
                    .set(Some(LimitHit::Instructions(self.budget.get())));
            } else if Instant::now() >= self.deadline.get() {
                self.hit.set(Some(LimitHit::Time(self.wall_time.get())));
            }
        }
        self.hit.get()
    }
}

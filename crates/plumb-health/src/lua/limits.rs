//! The hard limits of one script evaluation.

use std::time::Duration;

/// Hard limits for one evaluation. A script that hits one gets `Unknown` and a message naming
/// the limit; it never hangs the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LuaLimits {
    /// Wall-clock time (Argo: 1 s). Checked every 1,000 Lua instructions and every 1,000 steps
    /// of the pattern functions (`string.find`, `match`, `gmatch`, `gsub`, which are Plumb's own
    /// for that reason); the other C library functions do bounded work per call.
    pub wall_time: Duration,
    /// Lua VM instructions.
    pub instructions: u64,
    /// Bytes the script may allocate beyond what the interpreter already holds.
    pub memory_bytes: usize,
}

impl Default for LuaLimits {
    fn default() -> Self {
        Self {
            wall_time: Duration::from_secs(1),
            instructions: 100_000_000,
            memory_bytes: 64 * 1024 * 1024,
        }
    }
}

impl LuaLimits {
    /// Sets the wall-clock limit.
    pub fn wall_time(mut self, limit: Duration) -> Self {
        self.wall_time = limit;
        self
    }

    /// Sets the instruction budget.
    pub fn instructions(mut self, budget: u64) -> Self {
        self.instructions = budget;
        self
    }

    /// Sets the memory cap in bytes.
    pub fn memory_bytes(mut self, bytes: usize) -> Self {
        self.memory_bytes = bytes;
        self
    }
}

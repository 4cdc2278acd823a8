//! Lua health scripts, run the way Argo CD runs them (`util/lua/lua.go`), with hard limits.
//!
//! A script sees the object as the global `obj` (JSON `null` is `nil`) and returns a table with
//! `status` and `message`. It runs on LuaJIT in interpreter mode (Lua 5.1 semantics, `goto`
//! allowed, as gopher-lua allows it) so the instruction hook always fires. Each evaluation gets a
//! fresh global table over read-only libraries, so interpreter state is reused between
//! evaluations without one script seeing another's globals. Lookup of which script applies to an
//! object lives in [`scripts`], the per-thread interpreters and compiled chunks in [`cache`].

mod builtin;
mod cache;
mod convert;
mod patterns;
mod sandbox;
pub(crate) mod scripts;
mod strings;
mod to_json;

pub(crate) use cache::run_script;
pub(crate) use to_json::lua_to_json;

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::status::HealthStatus;

/// Message Argo gives when a script returns a status that is not one of the six codes.
pub(crate) const INVALID_STATUS: &str = "Lua returned an invalid health status";

/// One health script, compiled at most once per thread (keyed by a hash of its text).
#[derive(Clone)]
pub struct LuaScript {
    source: Arc<str>,
    hash: u64,
    open_libs: bool,
    origin: Arc<str>,
}

impl LuaScript {
    /// A script from its text. `open_libs` gives it every standard library (Argo's
    /// `useOpenLibs`) instead of base, table, string, math and a safe `os`. `origin` says where the
    /// text came from (a settings key or a file) for logs and the CLI.
    pub fn new(source: impl Into<Arc<str>>, open_libs: bool, origin: impl Into<Arc<str>>) -> Self {
        let source = source.into();
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        source.hash(&mut hasher);
        Self {
            hash: hasher.finish(),
            source,
            open_libs,
            origin: origin.into(),
        }
    }

    /// The script text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether the script runs with every standard library.
    pub fn open_libs(&self) -> bool {
        self.open_libs
    }

    /// Where the script came from (`argocd-cm resource.customizations.health.apps_Deployment`,
    /// or a file path).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Runs the script on one object. `None` means the script returned `nil` or `{}` (no health);
    /// errors and limits give `Unknown` with a message, as in Argo.
    pub fn evaluate(&self, obj: &Value, limits: &LuaLimits) -> Option<HealthStatus> {
        cache::evaluate(self, obj, limits)
    }
}

impl fmt::Debug for LuaScript {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LuaScript")
            .field("origin", &self.origin)
            .field("open_libs", &self.open_libs)
            .field("bytes", &self.source.len())
            .finish()
    }
}

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

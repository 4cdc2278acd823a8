//! The program that runs renders: which executable, with which arguments before the worker's own.

use std::ffi::OsString;
use std::path::PathBuf;

/// The subcommand of the `plumb` binary that runs [`main`](super::main).
pub const SUBCOMMAND: &str = "render-worker";

/// The program that runs renders under limits: a binary whose `main` calls
/// [`main`](super::main) with the arguments that follow `args`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worker {
    /// The executable.
    pub program: PathBuf,
    /// Arguments before the worker's own (`render-worker` for the `plumb` binary).
    pub args: Vec<OsString>,
}

impl Worker {
    /// A dedicated worker binary that takes the worker arguments directly.
    pub fn program(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
        }
    }

    /// The running executable's `render-worker` subcommand (what the `plumb` binary provides).
    pub fn current_exe() -> Self {
        // /proc/self/exe names the running binary even if its file was replaced since.
        let program = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("/proc/self/exe"));
        Self {
            program,
            args: vec![OsString::from(SUBCOMMAND)],
        }
    }
}

impl Default for Worker {
    fn default() -> Self {
        Self::current_exe()
    }
}

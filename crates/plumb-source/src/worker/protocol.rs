//! What a worker and its caller say to each other: the ready line, how a failed `exec` is
//! reported, and the Jsonnet request and answer.

use std::path::PathBuf;

use plumb_model::application::JsonnetSource;
use serde::{Deserialize, Serialize};

/// The first line a worker writes to standard error once its limits are in place; a program that
/// does not write it is not a render worker (or failed before it was bounded).
pub(crate) const READY: &str = "plumb-render-worker: limits set";
/// How the worker reports that the tool it was to run could not be started.
pub(crate) const EXEC_FAILED: &str = "plumb-render-worker: cannot run";
/// Exit code of a worker whose tool does not exist (as a shell's).
pub(crate) const EXIT_NOT_FOUND: u8 = 127;

/// What the caller asks a Jsonnet worker to evaluate (sent on its standard input).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct JsonnetRequest {
    /// The commit's tree.
    pub root: PathBuf,
    /// The `.jsonnet` file, relative to `root`.
    pub file: PathBuf,
    pub opts: JsonnetSource,
    pub max_stack: usize,
    /// Largest file an import may read (`Limits::max_file_bytes`).
    pub max_file_bytes: u64,
}

/// How a Jsonnet worker answers on standard output: this line, then the JSON output or the error.
pub(crate) const JSONNET_OK: &str = "ok\n";
pub(crate) const JSONNET_ERROR: &str = "error\n";

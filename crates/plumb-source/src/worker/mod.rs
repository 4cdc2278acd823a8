//! Renders run in a worker process, never in the caller's threads.
//!
//! Jsonnet has no memory bound and cannot be cancelled in-process, and helm and kustomize are
//! programs that may loop or grow without end on a hostile chart or kustomization. So every render
//! is a child process that the kernel bounds and that can be killed whole:
//!
//! - the caller ([`supervise`]) starts the worker in a new process group, waits with a deadline,
//!   and kills the whole group (SIGKILL) when the deadline passes, and again when the worker ends,
//!   so that nothing it started (helm's or kustomize's own children, e.g. `git` for a remote base)
//!   keeps running;
//! - the worker ([`main`]) first lowers its own resource limits ([`rlimits`]: memory, CPU time, no
//!   core dumps) and asks to die with its parent, then either evaluates Jsonnet itself or replaces
//!   itself with the tool (`exec`), which inherits the limits and cannot raise them again.
//!
//! The worker is a program that calls [`main`]: the `plumb` binary runs it as its hidden
//! `render-worker` subcommand (the default, [`Worker::default`]: the current executable), and
//! plumb-source's own `plumb-render-worker` binary serves its tests. The worker and its caller are
//! always the same build, so the arguments between them are not a stable interface.

mod entry;
mod program;
pub(crate) mod protocol;
mod rlimits;
pub(crate) mod sandbox;
pub(crate) mod supervise;

pub use entry::main;
pub use program::{SUBCOMMAND, Worker};

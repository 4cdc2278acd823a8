//! Running the operation requested on `Application.operation` and recording it in
//! `status.operationState` and `status.history`.
//!
//! The operation is marked `Running` in the status before any change is made, then runs in a
//! task of its own (a sync with waves and hooks can take minutes; reconciles of other
//! Applications go on meanwhile). Progress (the running message and each resource's result) is
//! written as it happens; a failed sync is retried with backoff when the operation (or the
//! Application's `syncPolicy.retry`) asks for it; `Terminating` (written by `plumb app
//! terminate-op`) stops it. A controller that finds an operation `Running` that it did not start
//! itself (it was restarted mid-way) fails it cleanly instead of running it again.

mod attempt;
mod drive;
mod finish;
mod history;
mod start;
mod state;

pub(crate) use attempt::brake_of;
pub(crate) use start::{fail_interrupted, refuse_in_window, start_sync};
pub use state::control_of;

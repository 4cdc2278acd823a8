//! Why a sync window cannot be evaluated. Argo refuses to sync when its windows cannot be read
//! (`CanSync` returns `invalid sync windows`), and callers of [`super::evaluate`] should fail
//! closed the same way.

use super::cron::CronError;
use super::duration::DurationError;

/// A sync window that cannot be evaluated, named by its position and `kind:schedule:duration`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WindowError {
    /// `kind` is neither `allow` nor `deny`.
    #[error("sync window {index} ({window}): kind '{kind}' mismatch: can only be allow or deny")]
    Kind {
        /// Position of the window in the list evaluated.
        index: usize,
        /// `kind:schedule:duration`.
        window: String,
        /// The kind written.
        kind: String,
    },
    /// `schedule` is not a cron schedule.
    #[error("sync window {index} ({window}): cannot parse schedule '{schedule}'")]
    Schedule {
        /// Position of the window in the list evaluated.
        index: usize,
        /// `kind:schedule:duration`.
        window: String,
        /// The schedule written.
        schedule: String,
        /// The field that is wrong and why.
        #[source]
        source: CronError,
    },
    /// `duration` is not a Go duration.
    #[error("sync window {index} ({window}): cannot parse duration '{duration}'")]
    Duration {
        /// Position of the window in the list evaluated.
        index: usize,
        /// `kind:schedule:duration`.
        window: String,
        /// The duration written.
        duration: String,
        /// Go's complaint.
        #[source]
        source: DurationError,
    },
    /// `timeZone` (or the schedule's `CRON_TZ=`) names no zone of the time zone database.
    #[error("sync window {index} ({window}): unknown time zone '{zone}'")]
    TimeZone {
        /// Position of the window in the list evaluated.
        index: usize,
        /// `kind:schedule:duration`.
        window: String,
        /// The zone written.
        zone: String,
        /// The lookup failure.
        #[source]
        source: jiff::Error,
    },
}

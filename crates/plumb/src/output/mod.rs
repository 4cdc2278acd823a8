//! Output of the `plumb app` and `plumb proj` commands: one model (the [`Application`] or
//! AppProject as the API server returned it, plus [`rows::ResourceRow`]s derived from it) and one
//! renderer per format: [`wide`] and [`project`] (Argo's default text layouts), [`json`] and
//! [`yaml`] (the object itself), [`tree`] (resources with the objects they own).
//!
//! Renderers are pure functions returning text; the commands decide where it goes (results to
//! stdout, diagnostics to stderr).
//!
//! [`Application`]: plumb_model::application::Application

pub mod appset;
pub mod json;
pub mod project;
pub mod rows;
pub mod tabwriter;
pub mod timefmt;
pub mod tree;
pub mod wide;
pub mod yaml;

use jiff::Timestamp;
use jiff::tz::TimeZone;

/// Where times are printed and what "now" is: the local zone and clock in the commands, fixed
/// values in tests.
#[derive(Debug, Clone)]
pub struct Clock {
    /// Zone times are shown in (Go prints API times in the local zone).
    pub tz: TimeZone,
    /// The current time (durations of running operations, progress-row timestamps).
    pub now: Timestamp,
}

impl Clock {
    /// The system zone and the current time.
    pub fn system() -> Self {
        Self {
            tz: TimeZone::system(),
            now: Timestamp::now(),
        }
    }

    /// The same zone at the current time.
    pub fn tick(&self) -> Self {
        Self {
            tz: self.tz.clone(),
            now: Timestamp::now(),
        }
    }
}

//! Process exit codes, defined once. Commands that mirror `argocd app ...` use Argo's meanings.

use std::process::ExitCode;

/// What a command's outcome means to a script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// 0: success; no difference; the awaited condition was met.
    Success,
    /// 1: a negative answer: a diff was found, a sync failed, a wait timed out or hit Degraded,
    /// a health test failed.
    Negative,
    /// 2: an error: bad input, unreadable file, cluster unreachable.
    Error,
}

impl From<Outcome> for ExitCode {
    fn from(o: Outcome) -> Self {
        match o {
            Outcome::Success => ExitCode::from(0),
            Outcome::Negative => ExitCode::from(1),
            Outcome::Error => ExitCode::from(2),
        }
    }
}

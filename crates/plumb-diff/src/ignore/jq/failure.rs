//! Why a jq expression produced no paths, in the words rules and messages use.

use std::time::Duration;

use super::budget;

/// Why a jq expression produced no paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JqFailure {
    /// The expression does not parse or compile.
    Invalid(String),
    /// It uses an operator or builtin Plumb does not run.
    Refused(String),
    /// It ran past the time limit.
    Timeout(Duration),
    /// It did not finish within its step budget.
    Fuel(u64),
    /// It recursed deeper than the stack allows.
    Stack,
    /// It grew the process's memory by more than this many bytes.
    Memory(u64),
    /// The jq engine failed inside (a bug in it); the evaluation was stopped.
    Crashed(String),
    /// It failed at run time (treated as a no-op). The text names no value of the object.
    Runtime(String),
}

impl JqFailure {
    /// Whether the expression cannot finish on some input: the controller refuses such rules.
    pub(crate) fn is_unbounded(&self) -> bool {
        matches!(
            self,
            JqFailure::Timeout(_)
                | JqFailure::Fuel(_)
                | JqFailure::Stack
                | JqFailure::Memory(_)
                | JqFailure::Crashed(_)
        )
    }
}

impl std::fmt::Display for JqFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JqFailure::Invalid(why) => write!(f, "is invalid: {why}"),
            JqFailure::Refused(why) => write!(f, "is refused: {why}"),
            JqFailure::Timeout(d) => write!(f, "was stopped: it ran longer than {d:?}"),
            JqFailure::Fuel(n) => write!(
                f,
                "was stopped: it did not finish within {n} evaluation steps (endless recursion or loop?)"
            ),
            JqFailure::Stack => write!(f, "was stopped: it recursed too deeply"),
            JqFailure::Memory(bytes) => write!(
                f,
                "was stopped: it grew memory by more than {} MiB",
                bytes / (1024 * 1024)
            ),
            JqFailure::Crashed(why) => write!(f, "was stopped: the jq engine failed ({why})"),
            JqFailure::Runtime(why) => write!(f, "failed: {why}"),
        }
    }
}

impl From<budget::Stop> for JqFailure {
    fn from(stop: budget::Stop) -> Self {
        match stop {
            budget::Stop::Timeout(d) => JqFailure::Timeout(d),
            budget::Stop::Fuel(n) => JqFailure::Fuel(n),
            budget::Stop::Stack => JqFailure::Stack,
            budget::Stop::Memory(bytes) => JqFailure::Memory(bytes),
            budget::Stop::Panic(msg) => JqFailure::Crashed(msg),
        }
    }
}

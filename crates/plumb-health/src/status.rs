//! Health codes and the status Plumb reports for one object.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A health code, declared in Argo CD's order from best to worst, so "worse" is `>`.
///
/// Ported from gitops-engine `pkg/health/health.go` (`healthOrder`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum HealthCode {
    /// The object is fully up.
    Healthy,
    /// The object is paused or suspended on purpose.
    Suspended,
    /// The object is not healthy yet but may still get there.
    Progressing,
    /// The object is expected but absent from the cluster.
    Missing,
    /// The object failed or cannot reach a healthy state.
    Degraded,
    /// Health could not be assessed.
    Unknown,
}

impl HealthCode {
    /// Every code, best first.
    pub const ALL: [HealthCode; 6] = [
        HealthCode::Healthy,
        HealthCode::Suspended,
        HealthCode::Progressing,
        HealthCode::Missing,
        HealthCode::Degraded,
        HealthCode::Unknown,
    ];

    /// Argo's string for the code (`Healthy`, `Progressing`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            HealthCode::Healthy => "Healthy",
            HealthCode::Suspended => "Suspended",
            HealthCode::Progressing => "Progressing",
            HealthCode::Missing => "Missing",
            HealthCode::Degraded => "Degraded",
            HealthCode::Unknown => "Unknown",
        }
    }
}

impl fmt::Display for HealthCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The string was not one of the six health codes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "not a health status (expected Healthy, Suspended, Progressing, Missing, Degraded or Unknown)"
)]
pub struct InvalidHealthCode;

impl FromStr for HealthCode {
    type Err = InvalidHealthCode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HealthCode::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or(InvalidHealthCode)
    }
}

/// The health of one object: a code and a human message (often empty, as in Argo).
///
/// "No health at all" is `Option::<HealthStatus>::None`, never a status: Argo gives no health to
/// ConfigMaps, Secrets and custom resources without a rule, and they are skipped in aggregation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthStatus {
    /// The health code (JSON `status`, as in Argo's API).
    #[serde(rename = "status")]
    pub code: HealthCode,
    /// Why; empty when the rule gives no message.
    #[serde(default)]
    pub message: String,
}

impl HealthStatus {
    /// A status with a message.
    pub fn new(code: HealthCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// A status with an empty message.
    pub fn bare(code: HealthCode) -> Self {
        Self {
            code,
            message: String::new(),
        }
    }
}

impl fmt::Display for HealthStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            write!(f, "{}", self.code)
        } else {
            write!(f, "{}: {}", self.code, self.message)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_argos_health_order() {
        let mut shuffled = vec![
            HealthCode::Unknown,
            HealthCode::Progressing,
            HealthCode::Healthy,
            HealthCode::Degraded,
            HealthCode::Missing,
            HealthCode::Suspended,
        ];
        shuffled.sort();
        assert_eq!(shuffled, HealthCode::ALL);
        assert!(HealthCode::Degraded > HealthCode::Missing);
        assert!(HealthCode::Suspended < HealthCode::Progressing);
    }

    #[test]
    fn codes_round_trip_through_strings_and_json() {
        for code in HealthCode::ALL {
            assert_eq!(code.as_str().parse::<HealthCode>(), Ok(code));
        }
        assert_eq!("healthy".parse::<HealthCode>(), Err(InvalidHealthCode));
        let s = HealthStatus::new(HealthCode::Degraded, "boom");
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"status":"Degraded","message":"boom"}"#
        );
    }
}

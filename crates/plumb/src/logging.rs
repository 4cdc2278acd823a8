//! The log subscriber of the `plumb` binary: `PLUMB_LOG` directives (else `RUST_LOG`, else
//! `warn`), with the targets of libraries that can log HTTP bodies or headers capped whatever the
//! directives ask, because a body may be a Secret and a header a bearer token.

use std::io::IsTerminal;

use tracing::Level;
use tracing_subscriber::filter::{EnvFilter, FilterExt, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{Layer, fmt};

/// Library targets that log request or response content, and the most verbose level kept:
/// kube-client logs a whole response body at WARN when it cannot decode it and API error
/// bodies at DEBUG; h2 logs frames at DEBUG; hyper, rustls and tower-http trace connections.
pub const CAPPED: &[(&str, Level)] = &[
    ("kube_client::client", Level::ERROR),
    ("h2", Level::INFO),
    ("hyper", Level::INFO),
    ("hyper_util", Level::INFO),
    ("rustls", Level::INFO),
    ("tower_http", Level::INFO),
];

/// The caps as a filter: every other target at any level.
pub fn caps() -> Targets {
    CAPPED.iter().fold(
        Targets::new().with_default(Level::TRACE),
        |t, (target, level)| t.with_target(*target, *level),
    )
}

/// Installs the subscriber (stderr).
pub fn init() {
    let directives = EnvFilter::try_from_env("PLUMB_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new("warn"));
    let layer = fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_filter(directives.and(caps()));
    let _ = tracing_subscriber::registry().with(layer).try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_logging_targets_are_capped_and_the_rest_is_not() {
        let caps = caps();
        assert!(!caps.would_enable("kube_client::client", &Level::WARN));
        assert!(caps.would_enable("kube_client::client::builder", &Level::ERROR));
        assert!(!caps.would_enable("h2::codec::framed_write", &Level::DEBUG));
        assert!(!caps.would_enable("hyper_util::client::legacy", &Level::TRACE));
        assert!(caps.would_enable("hyper", &Level::INFO));
        assert!(caps.would_enable("plumb_controller::reconcile", &Level::TRACE));
        assert!(caps.would_enable("kube_runtime::watcher", &Level::TRACE));
    }
}

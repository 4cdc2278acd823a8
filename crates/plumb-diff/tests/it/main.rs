//! plumb-diff integration tests.

// Helpers outside #[test] functions panic on bad fixtures, which is what a test wants.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod argo_parity;
mod fixtures;
mod normal_format;
mod offline_pairs;
mod server_side;
mod wire_format;

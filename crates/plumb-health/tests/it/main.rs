//! Integration tests for plumb-health, by topic.

// Test helpers outside #[test] functions panic on bad fixtures, which is what a test wants.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod actions;
mod aggregate;
mod builtin;
mod crossplane;
mod generic;
mod library;
mod lookup;
mod lua_sandbox;
mod operators;
mod support;

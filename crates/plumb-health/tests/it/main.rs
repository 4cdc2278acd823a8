//! Integration tests for plumb-health, by topic.

mod aggregate;
mod builtin;
mod generic;
mod library;
mod lookup;
mod lua_sandbox;
mod support;

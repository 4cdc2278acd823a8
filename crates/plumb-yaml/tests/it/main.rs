//! plumb-yaml integration tests.

mod emit_table;
mod round_trip;

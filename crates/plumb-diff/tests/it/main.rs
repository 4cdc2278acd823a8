//! plumb-diff integration tests.

mod fixtures;
mod normal_format;
mod offline_pairs;
mod server_side;

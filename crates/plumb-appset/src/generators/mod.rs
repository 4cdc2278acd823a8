//! Generators (TEMPORARY on branch ascm: agen owns this file and values.rs; only the two `pub mod`
//! lines below are ascm's to add).

pub mod pull_request;
pub mod scm_provider;
pub mod values;

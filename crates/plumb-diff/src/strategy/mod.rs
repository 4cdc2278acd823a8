//! The two ways of predicting live: [`Strategy::ServerSide`] (the API server's dry-run result,
//! obtained by the caller) and [`Strategy::ThreeWay`] (offline). Both return the same shape:
//! a predicted live object plus, when the preferred path could not be taken, why.

pub(crate) mod server_side;
pub(crate) mod three_way;

use serde_json::Value;

/// How to predict live for one pair.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Strategy<'a> {
    /// Use the result of a server-side-apply dry-run of the desired object (field manager
    /// `plumb-controller`, forced conflicts), done by the caller with a cluster.
    ServerSide {
        /// The object the dry-run returned.
        predicted_live: &'a Value,
    },
    /// Offline: desired merged onto live with the last-applied configuration as the base.
    ThreeWay,
}

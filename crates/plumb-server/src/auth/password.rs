//! Password hashes: bcrypt at Argo's cost, on the blocking pool.

use crate::error::{Error, Result};

/// Argo's bcrypt cost.
pub(super) const BCRYPT_COST: u32 = 10;
/// A bcrypt hash of `password` with Argo's cost.
pub(crate) async fn hash_password(password: String) -> Result<String> {
    bcrypt_hash(password).await
}

pub(super) async fn bcrypt_hash(password: String) -> Result<String> {
    tokio::task::spawn_blocking(move || bcrypt::hash(password, BCRYPT_COST))
        .await
        .map_err(|e| Error::Internal(format!("hashing a password: {e}")))?
        .map_err(|e| Error::Internal(format!("hashing a password: {e}")))
}

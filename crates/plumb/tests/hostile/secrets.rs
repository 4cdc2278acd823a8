//! Attacks: secrets (filled in by the trust-boundary work).

//! Attacks: limits (filled in by the trust-boundary work).

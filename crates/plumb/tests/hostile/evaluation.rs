//! Attacks: evaluation (filled in by the trust-boundary work).

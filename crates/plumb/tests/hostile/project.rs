//! Attacks: project (filled in by the trust-boundary work).

//! Attacks: renders (filled in by the trust-boundary work).

//! Attacks: guards (filled in by the trust-boundary work).

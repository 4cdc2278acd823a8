//! Attacks: repo_reads (filled in by the trust-boundary work).

//! GnuPG signature verification of the Git revisions Plumb renders, as Argo CD verifies them for
//! an AppProject's `sourceIntegrity` Git policies and legacy `signatureKeys` (Argo's
//! `util/sourceintegrity`).
//!
//! - `key_id`: Argo's key IDs (16 hex digits, or a 40-digit fingerprint whose last 16 count)
//!   and which signer a project allows.
//! - `keyring`: the public keys of `argocd-gpg-keys-cm`, checked and imported into a private
//!   GnuPG home made for them.
//! - `run`: the `gpg` binary run bounded in time and output.
//! - `status`: GnuPG's machine-readable verdict (`--status-fd`), read as Git reads it.
//! - `check`: signed objects verified (what they sign is read by `crate::git`), and Argo's
//!   messages when they fail the policy.
//! - `verdicts`: verdicts remembered per signed content for one set of keys (bounded).
//!
//! Verification runs the real `gpg` (Argo's own way) on a private, temporary GnuPG home, under a
//! time limit and with bounded output.

mod check;
mod key_id;
mod keyring;
mod run;
mod status;
mod verdicts;

pub use check::{MAX_PROBLEMS, describe_problems, is_good_seal, verify_revision};
pub use key_id::{is_long_key_id, is_short_key_id, key_allowed, key_id};
pub use keyring::{GpgKeys, KeyInfo, MAX_KEY_BYTES, MAX_KEYS, inspect_keys};

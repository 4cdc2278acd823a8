//! What Plumb reproduces of Go and of the Kubernetes API machinery so that its values read and
//! print as Argo CD's do: Go's `time.Duration` syntax and text ([`duration`]), and the JSON merge
//! patch (RFC 7386) between two documents ([`merge_patch`]), as Argo builds it with
//! `jsonpatch.CreateMergePatch`.
//!
//! ```
//! use plumb_model::go::duration::GoDuration;
//! let d: GoDuration = "90s".parse()?;
//! assert_eq!(d.to_string(), "1m30s");
//! # Ok::<(), plumb_model::go::duration::Error>(())
//! ```

pub mod duration;
pub mod merge_patch;

//! One module per subcommand. Each exposes a clap `Args` struct and a `run` returning an [`Outcome`].
//!
//! [`Outcome`]: crate::exit::Outcome

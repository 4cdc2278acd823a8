//! Questions asked before acting: the terminal prompt and the brake on mass deletion.

pub(crate) mod prompt;
pub(crate) mod prune_brake;

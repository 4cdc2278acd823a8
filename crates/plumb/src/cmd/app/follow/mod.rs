//! Following an operation: what `app wait` and `app sync` wait for, and the spinner showing
//! its state.

pub(crate) mod spinner;
pub(crate) mod waiter;

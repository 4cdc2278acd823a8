//! Integration tests of the ApplicationSet controller against the real control plane.

mod scm_gitea;
mod scm_github;
mod scm_support;

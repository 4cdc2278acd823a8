//! The AppProject a render works for, so that a project-scoped repository Secret (one with a
//! `project` key, Argo CD's "Project scoped Repositories") lends its credentials to that
//! project's Applications only.
//!
//! The scope is set for the duration of one render on the thread that runs it
//! ([`in_project`]); every fetch of a render happens on that thread (the Git cache's shared
//! listings and fetch gates run the work on the first caller's thread), so the credential
//! choice deep in the Git, Helm and OCI clients sees it without every signature carrying it.
//! Outside any scope (the CLI's `plumb render --repo`, a revision lookup without an
//! Application) only unscoped Secrets are used: forgetting the scope fails closed.

use std::cell::RefCell;

thread_local! {
    static PROJECT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f` with `project` as the scope (restored afterwards, also on panic).
pub fn in_project<T>(project: &str, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<String>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            PROJECT.with(|p| *p.borrow_mut() = previous);
        }
    }
    let previous = PROJECT.with(|p| p.borrow_mut().replace(project.to_owned()));
    let _restore = Restore(previous);
    f()
}

/// The project of the render running on this thread, if any.
pub(crate) fn current() -> Option<String> {
    PROJECT.with(|p| p.borrow().clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scope_holds_inside_and_is_restored_after() {
        assert_eq!(current(), None);
        in_project("payments", || {
            assert_eq!(current().as_deref(), Some("payments"));
            in_project("billing", || {
                assert_eq!(current().as_deref(), Some("billing"))
            });
            assert_eq!(current().as_deref(), Some("payments"));
        });
        assert_eq!(current(), None);
        let caught = std::panic::catch_unwind(|| in_project("x", || panic!("boom")));
        assert!(caught.is_err());
        assert_eq!(current(), None);
    }
}

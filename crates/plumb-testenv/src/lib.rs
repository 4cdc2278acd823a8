//! Test support for Plumb's end-to-end tests.
//!
//! - [`TestEnv`]: one real control plane (etcd, kube-apiserver, kube-controller-manager,
//!   kube-scheduler, kwok) per test process, started through `scripts/testenv up`, or the one named
//!   by `PLUMB_TEST_KUBECONFIG` (what `./scripts/test` and CI use so that every test binary shares
//!   one). There is no fake API server: a test that needs a cluster and cannot get one fails.
//! - [`TestEnv::private`]: a control plane of the caller's own, for fault tests that stop, start
//!   or restart one [`Component`] (etcd, kube-apiserver, ...), pause it (SIGSTOP) or compact etcd;
//!   [`TestEnv::private_with`] changes its settings ([`PrivateOptions`]).
//! - [`TestNamespace`]: an isolated namespace per test, deleted when dropped.
//! - [`process`]: a command with input on stdin, `kubectl apply` of one object, the admin
//!   password of a control namespace, the address a `plumb server` child listens on.
//! - [`pod_logs`]: container logs served for fake Pods (kwok's `Logs`), so that `pods/log` works.
//! - [`dex::Dex`]: the real Dex (`scripts/dex`) on loopback, and [`dex::Browser`], a scripted
//!   browser through its login pages.
//! - [`gitea::Gitea`]: a real Gitea (`scripts/gitea`) on loopback, with fixtures made through its
//!   API and `git push`.
//! - [`dex::Dex`]: a real Dex (`scripts/dex`) on loopback with the configuration given.
//! - [`oci_registry::OciRegistry`]: a real OCI registry (CNCF distribution) on loopback, TLS and
//!   htpasswd, charts pushed with the real `helm push`.
//!
//! ```no_run
//! # async fn demo() {
//! let env = plumb_testenv::TestEnv::shared();
//! let ns = env.namespace("rollout");
//! let client = env.client().await;
//! # let _ = (ns, client);
//! # }
//! ```

mod appset_crd;
pub mod chart_repo;
mod cluster;
pub mod dex;
pub mod git;
pub mod git_http;
pub mod git_lfs;
pub mod git_ssh;
pub mod gitea;
pub mod github_api;
pub mod gpg;
mod http_server;
mod namespace;
pub mod oci_registry;
pub mod pod_logs;
pub mod process;
pub mod tools;

pub use cluster::{Component, Error, PrivateOptions, TestEnv};
pub use namespace::TestNamespace;

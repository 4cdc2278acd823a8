//! The controller against a real control plane and real Git repositories.

mod api_traffic;
mod app_namespaces;
mod app_of_apps;
mod applicationset;
mod applicationset_leader;
mod automation;
mod exec_cluster;
mod git_sharing;
mod helm_repo;
mod impersonation;
mod missing_status;
mod multi_cluster;
mod namespace_install;
mod namespaced_cluster;
mod notifications;
mod oci;
mod project;
mod project_scoped;
mod prune_brake;
mod reconcile;
mod restart;
mod runtime_free;
mod support;
mod sync_depth;

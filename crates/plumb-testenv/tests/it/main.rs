//! Proof that the test control plane is a real one: controllers roll Deployments out onto the kwok
//! node, CRDs work through discovery, and kubectl works with the written kubeconfig; workloads
//! behave as their testenv annotations say; the node survives a NotReady spell; `up` survives a
//! port clash. The test HTTP servers work on their own.

mod control_plane;
mod http_servers;
mod node_spell;
mod pod_logs;
mod ports;
mod workloads;

//! Proof that the test control plane is a real one: controllers roll Deployments out onto the kwok
//! node, CRDs work through discovery, and kubectl works with the written kubeconfig.

mod control_plane;

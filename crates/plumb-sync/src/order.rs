//! Argo CD's kind order (Helm's install order): what must exist before what.

/// Kinds in the order Argo CD applies them within one phase and wave
/// (`gitops-engine/pkg/sync/sync_tasks.go`); kinds not listed (custom resources) come last.
const KIND_ORDER: &[&str] = &[
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
];

/// The rank of a kind in Argo's order; unknown kinds rank after every known one.
pub fn kind_rank(kind: &str) -> usize {
    KIND_ORDER
        .iter()
        .position(|k| *k == kind)
        .unwrap_or(KIND_ORDER.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_and_crds_before_workloads_and_custom_resources_last() {
        assert!(kind_rank("Namespace") < kind_rank("ConfigMap"));
        assert!(kind_rank("CustomResourceDefinition") < kind_rank("Deployment"));
        assert!(kind_rank("Service") < kind_rank("Deployment"));
        assert!(kind_rank("Database") > kind_rank("APIService"));
    }
}

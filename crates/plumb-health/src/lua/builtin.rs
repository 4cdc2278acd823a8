//! Plumb's own health scripts for widely deployed operators, compiled into the binary and
//! consulted after every user source (settings keys, then `--customizations` directories), so a
//! team's script or a checkout of Argo CD's `resource_customizations` always wins.
//!
//! The scripts live in `resource_customizations/` (Argo's layout, with a `health_test.yaml` and
//! fixtures beside each) so `plumb admin health test` runs them like any library. They are
//! written from each project's documented status fields, run with the safe libraries and the
//! usual limits. A `_` kind directory applies to every kind of its group.

/// (group, kind, script); kind `*` matches every kind of the group.
pub(crate) const SCRIPTS: &[(&str, &str, &str)] = &[
    (
        "argoproj.io",
        "AnalysisRun",
        include_str!("../../resource_customizations/argoproj.io/AnalysisRun/health.lua"),
    ),
    (
        "argoproj.io",
        "Experiment",
        include_str!("../../resource_customizations/argoproj.io/Experiment/health.lua"),
    ),
    (
        "argoproj.io",
        "Rollout",
        include_str!("../../resource_customizations/argoproj.io/Rollout/health.lua"),
    ),
    (
        "bitnami.com",
        "SealedSecret",
        include_str!("../../resource_customizations/bitnami.com/SealedSecret/health.lua"),
    ),
    (
        "cert-manager.io",
        "Certificate",
        include_str!("../../resource_customizations/cert-manager.io/Certificate/health.lua"),
    ),
    (
        "cert-manager.io",
        "CertificateRequest",
        include_str!("../../resource_customizations/cert-manager.io/CertificateRequest/health.lua"),
    ),
    (
        "cert-manager.io",
        "ClusterIssuer",
        include_str!("../../resource_customizations/cert-manager.io/ClusterIssuer/health.lua"),
    ),
    (
        "cert-manager.io",
        "Issuer",
        include_str!("../../resource_customizations/cert-manager.io/Issuer/health.lua"),
    ),
    (
        "constraints.gatekeeper.sh",
        "*",
        include_str!("../../resource_customizations/constraints.gatekeeper.sh/_/health.lua"),
    ),
    (
        "external-secrets.io",
        "ClusterSecretStore",
        include_str!(
            "../../resource_customizations/external-secrets.io/ClusterSecretStore/health.lua"
        ),
    ),
    (
        "external-secrets.io",
        "ExternalSecret",
        include_str!("../../resource_customizations/external-secrets.io/ExternalSecret/health.lua"),
    ),
    (
        "external-secrets.io",
        "SecretStore",
        include_str!("../../resource_customizations/external-secrets.io/SecretStore/health.lua"),
    ),
    (
        "helm.toolkit.fluxcd.io",
        "HelmRelease",
        include_str!("../../resource_customizations/helm.toolkit.fluxcd.io/HelmRelease/health.lua"),
    ),
    (
        "kafka.strimzi.io",
        "Kafka",
        include_str!("../../resource_customizations/kafka.strimzi.io/Kafka/health.lua"),
    ),
    (
        "kafka.strimzi.io",
        "KafkaTopic",
        include_str!("../../resource_customizations/kafka.strimzi.io/KafkaTopic/health.lua"),
    ),
    (
        "kafka.strimzi.io",
        "KafkaUser",
        include_str!("../../resource_customizations/kafka.strimzi.io/KafkaUser/health.lua"),
    ),
    (
        "keda.sh",
        "ScaledJob",
        include_str!("../../resource_customizations/keda.sh/ScaledJob/health.lua"),
    ),
    (
        "keda.sh",
        "ScaledObject",
        include_str!("../../resource_customizations/keda.sh/ScaledObject/health.lua"),
    ),
    (
        "kustomize.toolkit.fluxcd.io",
        "Kustomization",
        include_str!(
            "../../resource_customizations/kustomize.toolkit.fluxcd.io/Kustomization/health.lua"
        ),
    ),
    (
        "kyverno.io",
        "ClusterPolicy",
        include_str!("../../resource_customizations/kyverno.io/ClusterPolicy/health.lua"),
    ),
    (
        "kyverno.io",
        "Policy",
        include_str!("../../resource_customizations/kyverno.io/Policy/health.lua"),
    ),
    (
        "monitoring.coreos.com",
        "Alertmanager",
        include_str!("../../resource_customizations/monitoring.coreos.com/Alertmanager/health.lua"),
    ),
    (
        "monitoring.coreos.com",
        "Prometheus",
        include_str!("../../resource_customizations/monitoring.coreos.com/Prometheus/health.lua"),
    ),
    (
        "networking.istio.io",
        "VirtualService",
        include_str!("../../resource_customizations/networking.istio.io/VirtualService/health.lua"),
    ),
    (
        "pkg.crossplane.io",
        "Configuration",
        include_str!("../../resource_customizations/pkg.crossplane.io/Configuration/health.lua"),
    ),
    (
        "pkg.crossplane.io",
        "Provider",
        include_str!("../../resource_customizations/pkg.crossplane.io/Provider/health.lua"),
    ),
    (
        "postgresql.cnpg.io",
        "Cluster",
        include_str!("../../resource_customizations/postgresql.cnpg.io/Cluster/health.lua"),
    ),
    (
        "serving.knative.dev",
        "Service",
        include_str!("../../resource_customizations/serving.knative.dev/Service/health.lua"),
    ),
    (
        "source.toolkit.fluxcd.io",
        "GitRepository",
        include_str!(
            "../../resource_customizations/source.toolkit.fluxcd.io/GitRepository/health.lua"
        ),
    ),
    (
        "source.toolkit.fluxcd.io",
        "HelmRepository",
        include_str!(
            "../../resource_customizations/source.toolkit.fluxcd.io/HelmRepository/health.lua"
        ),
    ),
    (
        "source.toolkit.fluxcd.io",
        "OCIRepository",
        include_str!(
            "../../resource_customizations/source.toolkit.fluxcd.io/OCIRepository/health.lua"
        ),
    ),
    (
        "templates.gatekeeper.sh",
        "ConstraintTemplate",
        include_str!(
            "../../resource_customizations/templates.gatekeeper.sh/ConstraintTemplate/health.lua"
        ),
    ),
    (
        "velero.io",
        "Backup",
        include_str!("../../resource_customizations/velero.io/Backup/health.lua"),
    ),
    (
        "velero.io",
        "Restore",
        include_str!("../../resource_customizations/velero.io/Restore/health.lua"),
    ),
    (
        "velero.io",
        "Schedule",
        include_str!("../../resource_customizations/velero.io/Schedule/health.lua"),
    ),
];

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use super::SCRIPTS;

    /// Every `health.lua` under `resource_customizations/` is compiled in, and nothing else.
    #[test]
    fn the_table_lists_every_script_directory() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("resource_customizations");
        let mut on_disk = BTreeSet::new();
        for group in std::fs::read_dir(&root).unwrap() {
            let group = group.unwrap().path();
            for kind in std::fs::read_dir(&group).unwrap() {
                let kind = kind.unwrap().path();
                if kind.join("health.lua").is_file() {
                    let name = |p: &Path| p.file_name().unwrap().to_string_lossy().into_owned();
                    let k = name(&kind).replace('_', "*");
                    on_disk.insert((name(&group), k));
                }
            }
        }
        let compiled: BTreeSet<(String, String)> = SCRIPTS
            .iter()
            .map(|(g, k, _)| (g.to_string(), k.to_string()))
            .collect();
        assert_eq!(compiled, on_disk);
        assert_eq!(compiled.len(), SCRIPTS.len(), "a kind listed twice");
    }
}

//! The `Cluster` that `plumb cluster add` sends (Argo's `cmdutil.NewCluster` and the flags
//! applied after it), and the parsing of the flags' values, each refused by flag name.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Result, bail};
use serde_json::{Value, json};

use super::kubeconfig::{context_entries, data_or_file};

/// Argo's `label.Parse` (`--label`, `--annotation`): `key=value`, exactly one `=`.
pub fn key_values(items: &[String]) -> Result<BTreeMap<String, String>> {
    items
        .iter()
        .map(|i| {
            let fields: Vec<&str> = i.split('=').collect();
            match fields.as_slice() {
                [k, v] => Ok((k.to_string(), v.to_string())),
                _ => bail!("labels should have key=value, but instead got: {i}"),
            }
        })
        .collect()
}

/// `--exec-command-env` (cobra's `StringToString`): `k=v` pairs, comma-separated, repeatable.
pub fn exec_env(items: &[String]) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for pair in items.iter().flat_map(|i| i.split(',')) {
        match pair.split_once('=') {
            Some((k, v)) if !k.is_empty() => {
                out.insert(k.to_string(), v.to_string());
            }
            _ => bail!("--exec-command-env: {pair:?} must be formatted as key=value"),
        }
    }
    Ok(out)
}

/// A proxy URL flag checked as the cluster Secret's `proxyUrl` is (the flag named).
pub fn proxy_url(flag: &str, value: &str) -> Result<String> {
    match plumb_app::clusters::ClusterConfig::parse(&json!({ "proxyUrl": value }).to_string()) {
        Ok(_) => Ok(value.to_string()),
        Err(e) => bail!("{flag}: {}", e.reason),
    }
}

/// Where the stored server URL comes from (`--cluster-endpoint`, `--in-cluster`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// The kubeconfig context's server (Argo's default, `kubeconfig`).
    Kubeconfig,
    /// `kube-public/cluster-info`'s server and CA (`kube-public`).
    KubePublic,
    /// `https://kubernetes.default.svc` (`internal`, `--in-cluster`).
    Internal,
}

/// `--cluster-endpoint` and `--in-cluster` (Argo: only one of them).
pub fn endpoint(flag: Option<&str>, in_cluster: bool) -> Result<Endpoint> {
    match (flag, in_cluster) {
        (Some(_), true) => bail!("Can only use one of --in-cluster or --cluster-endpoint"),
        (None, true) | (Some("internal"), false) => Ok(Endpoint::Internal),
        (None, false) | (Some("kubeconfig" | ""), false) => Ok(Endpoint::Kubeconfig),
        (Some("kube-public"), false) => Ok(Endpoint::KubePublic),
        (Some(other), false) => bail!(
            "--cluster-endpoint: {other:?} is not one of 'kubeconfig', 'kube-public', 'internal'"
        ),
    }
}

/// What `cluster add` learnt before building the Cluster.
pub struct Gathered<'a> {
    /// The kubeconfig file and the context.
    pub kubeconfig: &'a Path,
    /// The context's name.
    pub context: &'a str,
    /// argocd-manager's (or `--service-account`'s) token; empty with an exec plugin.
    pub token: &'a str,
    /// `execProviderConfig`, from the `--exec-command*` flags.
    pub exec: Option<Value>,
    /// `proxyUrl` as `--proxy-url` or the kubeconfig give it.
    pub proxy_url: Option<String>,
}

/// Argo's `NewCluster`: the context's server and TLS settings (files read), the token unless
/// the context authenticates with a client certificate pair, the exec plugin, the proxy and
/// the kubeconfig's `disable-compression`.
pub fn new_cluster(g: &Gathered<'_>, name: &str) -> Result<Value> {
    let (cluster, user) = context_entries(g.kubeconfig, g.context)?;
    let base = g.kubeconfig.parent().unwrap_or(Path::new("."));
    let mut tls =
        json!({"insecure": cluster["insecure-skip-tls-verify"].as_bool().unwrap_or(false)});
    if let Some(n) = cluster["tls-server-name"].as_str() {
        tls["serverName"] = json!(n);
    }
    for (to, data, file, entry) in [
        (
            "caData",
            "certificate-authority-data",
            "certificate-authority",
            &cluster,
        ),
        (
            "certData",
            "client-certificate-data",
            "client-certificate",
            &user,
        ),
        ("keyData", "client-key-data", "client-key", &user),
    ] {
        if let Some(v) = data_or_file(entry, data, file, base)? {
            tls[to] = json!(v);
        }
    }
    let mut config = json!({"tlsClientConfig": tls});
    if (tls.get("certData").is_none() || tls.get("keyData").is_none()) && !g.token.is_empty() {
        config["bearerToken"] = json!(g.token);
    }
    if let Some(e) = &g.exec {
        config["execProviderConfig"] = e.clone();
    }
    if let Some(p) = &g.proxy_url {
        config["proxyUrl"] = json!(p);
    }
    if cluster["disable-compression"].as_bool() == Some(true) {
        config["disableCompression"] = json!(true);
    }
    Ok(json!({
        "server": cluster["server"].as_str().unwrap_or_default(),
        "name": name,
        "config": config,
    }))
}

/// Argo's `GetKubePublicEndpoint`: the server and CA that `kube-public/cluster-info`
/// publishes.
pub async fn kube_public_endpoint(client: &kube::Client) -> Result<(String, Option<String>)> {
    use k8s_openapi::api::core::v1::ConfigMap;
    let cms: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), "kube-public");
    let cm = cms.get("cluster-info").await?;
    let Some(text) = cm.data.as_ref().and_then(|d| d.get("kubeconfig")) else {
        bail!("cluster-info does not contain a public kubeconfig");
    };
    let doc = plumb_yaml::read_documents(text, "cluster-info kubeconfig")
        .map_err(|e| anyhow::anyhow!("failed to parse cluster-info kubeconfig: {e}"))?
        .into_iter()
        .next()
        .map(|d| d.value)
        .unwrap_or(Value::Null);
    let Some(first) = doc["clusters"].as_array().and_then(|c| c.first()) else {
        bail!("cluster-info kubeconfig does not have any clusters");
    };
    let server = first["cluster"]["server"].as_str().unwrap_or_default();
    let ca = first["cluster"]["certificate-authority-data"]
        .as_str()
        .map(str::to_string);
    Ok((server.to_string(), ca))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_parsed_as_argo_parses_them() {
        let ok = key_values(&["a=1".into(), "b=".into()]).unwrap();
        assert_eq!(ok["a"], "1");
        assert_eq!(ok["b"], "");
        for bad in ["a", "a=b=c", "", "=="] {
            let e = key_values(&[bad.into()]).unwrap_err().to_string();
            assert_eq!(
                e,
                format!("labels should have key=value, but instead got: {bad}")
            );
        }
    }

    #[test]
    fn exec_env_pairs_are_checked() {
        let env = exec_env(&["A=1,B=2".into(), "C=x=y".into()]).unwrap();
        assert_eq!(env.len(), 3);
        assert_eq!(env["C"], "x=y");
        for bad in ["A", "=1", "A=1,,B=2", ""] {
            let e = exec_env(&[bad.into()]).unwrap_err().to_string();
            assert!(e.starts_with("--exec-command-env: "), "{e}");
        }
    }

    #[test]
    fn proxy_flags_are_named_and_never_echo_credentials() {
        assert_eq!(
            proxy_url("--proxy-url", "http://p:3128").unwrap(),
            "http://p:3128"
        );
        for bad in [
            "ftp://p",
            "socks5://p:1080",
            "not a url",
            "http://user:s3cret@",
        ] {
            let e = proxy_url("--proxy-url", bad).unwrap_err().to_string();
            assert!(e.starts_with("--proxy-url: "), "{e}");
            assert!(!e.contains("s3cret"), "{e}");
        }
    }

    #[test]
    fn endpoints() {
        assert_eq!(endpoint(None, false).unwrap(), Endpoint::Kubeconfig);
        assert_eq!(endpoint(None, true).unwrap(), Endpoint::Internal);
        assert_eq!(
            endpoint(Some("internal"), false).unwrap(),
            Endpoint::Internal
        );
        assert_eq!(
            endpoint(Some("kube-public"), false).unwrap(),
            Endpoint::KubePublic
        );
        assert!(endpoint(Some("kubeconfig"), true).is_err());
        assert!(endpoint(Some("public"), false).is_err());
    }
}

//! Repository certificates (Argo's `CertificateService`, `util/db/certificate.go`): SSH known
//! hosts in `argocd-ssh-known-hosts-cm` and TLS certificates in `argocd-tls-certs-cm`, listed,
//! added (checked first: host names, key types, certificates) and removed by host pattern.

pub mod known_hosts;
pub mod tls;

use std::collections::BTreeMap;
use std::sync::LazyLock;

use base64::Engine as _;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, PostParams};
use serde_json::{Value, json};

use super::error::Error;
use known_hosts::KnownHost;

/// Argo CD's ConfigMap of SSH known hosts.
pub const KNOWN_HOSTS_CM: &str = "argocd-ssh-known-hosts-cm";
/// Its key.
pub const KNOWN_HOSTS_KEY: &str = "ssh_known_hosts";
/// Argo CD's ConfigMap of TLS certificates.
pub const TLS_CERTS_CM: &str = crate::repositories::TLS_CERTS_CM;

/// Argo's `CertificateListSelector`.
#[derive(Debug, Clone, Default)]
pub struct Selector {
    /// A glob over host names (empty: all).
    pub host_pattern: String,
    /// `ssh`, `https` (or `tls`), `*` or empty.
    pub cert_type: String,
    /// An SSH key type, `*` or empty.
    pub cert_sub_type: String,
}

impl Selector {
    fn ssh(&self) -> bool {
        matches!(self.cert_type.as_str(), "" | "*" | "ssh")
    }
    fn tls(&self) -> bool {
        matches!(self.cert_type.as_str(), "" | "*" | "https" | "tls")
    }
    fn matches_ssh(&self, e: &KnownHost) -> bool {
        match_host(&e.host, &self.host_pattern)
            && (matches!(self.cert_sub_type.as_str(), "" | "*") || self.cert_sub_type == e.sub_type)
    }
}

/// Argo's `MatchHostName`: `filepath.Match` with brackets taken literally (`*` any run, `?`
/// one character); an empty pattern matches all.
pub fn match_host(host: &str, pattern: &str) -> bool {
    fn go(h: &[u8], p: &[u8]) -> bool {
        match p.split_first() {
            None => h.is_empty(),
            Some((b'*', rest)) => (0..=h.len()).any(|i| go(&h[i..], rest)),
            Some((b'?', rest)) => !h.is_empty() && go(&h[1..], rest),
            Some((c, rest)) => h.first() == Some(c) && go(&h[1..], rest),
        }
    }
    pattern.is_empty() || (pattern.len() <= 255 && go(host.as_bytes(), pattern.as_bytes()))
}

static HOSTNAME: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
    regex::Regex::new(r"^([a-zA-Z0-9]|[a-zA-Z0-9_][a-zA-Z0-9\-_]{0,61}[a-zA-Z0-9_])(\.([a-zA-Z0-9]|[a-zA-Z0-9_][a-zA-Z0-9\-_]{0,61}[a-zA-Z0-9]))*(\.){0,1}$").ok()
});

/// Argo's `IsValidHostname` (not FQDN): a host name or an IPv6 address.
pub fn valid_hostname(host: &str) -> bool {
    host.len() <= 253
        && (HOSTNAME.as_ref().is_some_and(|r| r.is_match(host))
            || host.parse::<std::net::Ipv6Addr>().is_ok())
}

/// The certificates of one control namespace.
#[derive(Clone)]
pub struct CertAdmin {
    api: Api<ConfigMap>,
    namespace: String,
}

/// The ConfigMaps as read.
struct Current {
    ssh: Vec<KnownHost>,
    tls: BTreeMap<String, String>,
}

fn item(server: &str, kind: &str, sub: &str, info: &str, data: Option<&str>) -> Value {
    let b64 = data.map(|d| base64::engine::general_purpose::STANDARD.encode(d));
    json!({"serverName": server, "certType": kind, "certSubType": sub,
           "certData": b64, "certInfo": info})
}

impl CertAdmin {
    /// The certificates of `namespace`.
    pub fn new(client: kube::Client, namespace: &str) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_owned(),
        }
    }

    fn kube(&self, what: &str) -> impl FnOnce(kube::Error) -> Error + use<> {
        let context = format!("{what} ConfigMap {}", self.namespace);
        move |source| Error::Kube { context, source }
    }

    async fn read(&self) -> Result<Current, Error> {
        let ssh_cm = self
            .api
            .get_opt(KNOWN_HOSTS_CM)
            .await
            .map_err(self.kube("reading"))?;
        let text = ssh_cm
            .and_then(|cm| cm.data)
            .and_then(|d| d.get(KNOWN_HOSTS_KEY).cloned())
            .unwrap_or_default();
        let ssh = known_hosts::parse(&text).map_err(|detail| Error::Invalid {
            field: format!("{KNOWN_HOSTS_CM}.{KNOWN_HOSTS_KEY}"),
            detail,
        })?;
        let tls_cm = self
            .api
            .get_opt(TLS_CERTS_CM)
            .await
            .map_err(self.kube("reading"))?;
        let tls = tls_cm.and_then(|cm| cm.data).unwrap_or_default();
        Ok(Current { ssh, tls })
    }

    /// Writes `data` into ConfigMap `name` (created when missing: Argo expects it installed).
    async fn save(&self, name: &str, data: BTreeMap<String, String>) -> Result<(), Error> {
        match self.api.get_opt(name).await.map_err(self.kube("reading"))? {
            Some(mut cm) => {
                cm.data = Some(data);
                self.api
                    .replace(name, &PostParams::default(), &cm)
                    .await
                    .map_err(self.kube("updating"))?;
            }
            None => {
                let cm = ConfigMap {
                    metadata: ObjectMeta {
                        name: Some(name.into()),
                        labels: Some(BTreeMap::from([(
                            "app.kubernetes.io/part-of".into(),
                            "argocd".into(),
                        )])),
                        ..Default::default()
                    },
                    data: Some(data),
                    ..Default::default()
                };
                self.api
                    .create(&PostParams::default(), &cm)
                    .await
                    .map_err(self.kube("creating"))?;
            }
        }
        Ok(())
    }

    async fn save_ssh(&self, entries: &[KnownHost]) -> Result<(), Error> {
        let mut text: String = entries
            .iter()
            .map(KnownHost::line)
            .collect::<Vec<_>>()
            .join("\n");
        text.push('\n');
        self.save(
            KNOWN_HOSTS_CM,
            BTreeMap::from([(KNOWN_HOSTS_KEY.into(), text)]),
        )
        .await
    }

    /// Argo's `ListRepoCertificates`: `{serverName, certType, certSubType, certInfo}` items.
    pub async fn list(&self, sel: &Selector) -> Result<Vec<Value>, Error> {
        let cur = self.read().await?;
        let mut out = Vec::new();
        if sel.ssh() {
            for e in cur.ssh.iter().filter(|e| sel.matches_ssh(e)) {
                let info = known_hosts::public_key(e)
                    .map(|(_, blob)| known_hosts::fingerprint(&blob))
                    .unwrap_or_default();
                out.push(item(&e.host, "ssh", &e.sub_type, &info, None));
            }
        }
        if sel.tls() {
            for (server, bundle) in cur
                .tls
                .iter()
                .filter(|(s, _)| match_host(s, &sel.host_pattern))
            {
                for pem in tls::split(bundle).unwrap_or_default() {
                    let (info, sub) = match tls::describe(&pem) {
                        Ok((subject, alg)) => (subject, alg),
                        Err(e) => (e, "invalid".into()),
                    };
                    out.push(item(server, "https", &sub, &info, None));
                }
            }
        }
        Ok(out)
    }

    /// Argo's `RemoveRepoCertificates`: the removed items, with their data.
    pub async fn remove(&self, sel: &Selector) -> Result<Vec<Value>, Error> {
        let cur = self.read().await?;
        let mut removed = Vec::new();
        if sel.ssh() {
            let (gone, kept): (Vec<_>, Vec<_>) =
                cur.ssh.into_iter().partition(|e| sel.matches_ssh(e));
            for e in &gone {
                removed.push(item(&e.host, "ssh", &e.sub_type, "", Some(&e.data)));
            }
            if !gone.is_empty() {
                self.save_ssh(&kept).await?;
            }
        }
        if sel.tls() {
            let (gone, kept): (BTreeMap<_, _>, BTreeMap<_, _>) = cur
                .tls
                .into_iter()
                .partition(|(s, _)| match_host(s, &sel.host_pattern));
            for (server, bundle) in &gone {
                for pem in tls::split(bundle).map_err(|detail| Error::Invalid {
                    field: format!("{TLS_CERTS_CM}.{server}"),
                    detail,
                })? {
                    removed.push(item(server, "https", "", "", Some(&pem)));
                }
            }
            if !gone.is_empty() {
                self.save(TLS_CERTS_CM, kept).await?;
            }
        }
        Ok(removed)
    }
}

mod create;

//! The layouts of `repo`, `repocreds` and `cert` list and get: Argo's tables
//! (`printRepoTable`, `printRepoCredsTable`, `printCertTable`), `-o json|yaml|url`.

use anyhow::{Result, bail};
use serde_json::Value;

use crate::output::tabwriter::Table;

fn text<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or_default()
}

fn flag(v: &Value, k: &str) -> bool {
    v.get(k).and_then(Value::as_bool).unwrap_or(false)
}

/// Argo's `printRepoTable`; CREDS is `inherited` or whether the (masked) object still shows
/// credentials (a user name), as argocd computes it.
pub fn repo_table(repos: &[Value]) -> String {
    let mut t = Table::new();
    t.line("TYPE\tNAME\tREPO\tINSECURE\tOCI\tLFS\tCREDS\tSTATUS\tMESSAGE\tPROJECT");
    for r in repos {
        let creds = if flag(r, "inheritedCreds") {
            "inherited".to_owned()
        } else {
            (!text(r, "username").is_empty()).to_string()
        };
        let state = r.get("connectionState").cloned().unwrap_or_default();
        t.row(&[
            text(r, "type"),
            text(r, "name"),
            text(r, "repo"),
            &flag(r, "insecure").to_string(),
            &flag(r, "enableOCI").to_string(),
            &flag(r, "enableLfs").to_string(),
            &creds,
            text(&state, "status"),
            text(&state, "message"),
            text(r, "project"),
        ]);
    }
    t.render()
}

/// Argo's `printRepoCredsTable` (the list shows no keys, so SSH_CREDS and TLS_CREDS are false).
pub fn creds_table(creds: &[Value]) -> String {
    let mut t = Table::new();
    t.line("URL PATTERN\tUSERNAME\tSSH_CREDS\tTLS_CREDS");
    for c in creds {
        t.row(&[text(c, "url"), text(c, "username"), "false", "false"]);
    }
    t.render()
}

/// Argo's `printCertTable`, sorted by `sort` (`hostname` or `type`) when asked.
pub fn cert_table(certs: &[Value], sort: &str) -> String {
    let mut certs = certs.to_vec();
    match sort {
        "hostname" => certs.sort_by(|a, b| text(a, "serverName").cmp(text(b, "serverName"))),
        "type" => certs.sort_by(|a, b| text(a, "certType").cmp(text(b, "certType"))),
        _ => {}
    }
    let mut t = Table::new();
    t.line("HOSTNAME\tTYPE\tSUBTYPE\tINFO");
    for c in &certs {
        t.row(&[
            text(c, "serverName"),
            text(c, "certType"),
            text(c, "certSubType"),
            text(c, "certInfo"),
        ]);
    }
    t.render()
}

/// `-o json|yaml` of `value`; `None` for other formats.
pub fn structured(value: &Value, format: &str) -> Result<Option<String>> {
    Ok(match format {
        "json" => Some(format!("{}\n", crate::output::json::render(value)?)),
        "yaml" => Some(crate::output::yaml::render(value)?),
        _ => None,
    })
}

/// Argo's `unknown refresh value` check: `hard` or nothing.
pub fn refresh(value: &str) -> Result<bool> {
    match value {
        "" => Ok(false),
        "hard" => Ok(true),
        other => bail!("unknown refresh value: {other}. Supported values: hard"),
    }
}

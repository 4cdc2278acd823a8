//! Adding certificates (Argo's `CreateRepoCertificate`): every item checked before anything is
//! written; an existing entry with other data is replaced only with `upsert`.

use base64::Engine as _;
use serde_json::Value;

use super::super::error::Error;
use super::known_hosts::{self, KnownHost};
use super::{CertAdmin, TLS_CERTS_CM, item, tls, valid_hostname};

/// The largest certificate data of one item.
const MAX_DATA: usize = 256 * 1024;

/// One requested item, read.
struct Requested {
    server: String,
    kind: String,
    sub_type: String,
    data: String,
}

fn read_item(i: usize, v: &Value) -> Result<Requested, Error> {
    let field = |k: &str| format!("certificates.items[{i}].{k}");
    let text = |k: &str| -> Result<String, Error> {
        match v.get(k) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) if s.len() <= 4 * MAX_DATA => Ok(s.clone()),
            Some(Value::String(_)) => Err(Error::Invalid {
                field: field(k),
                detail: format!("more than {MAX_DATA} bytes"),
            }),
            Some(_) => Err(Error::Invalid {
                field: field(k),
                detail: "expected a string".into(),
            }),
        }
    };
    let raw = base64::engine::general_purpose::STANDARD
        .decode(text("certData")?.trim())
        .map_err(|e| Error::Invalid {
            field: field("certData"),
            detail: format!("not base64: {e}"),
        })?;
    if raw.len() > MAX_DATA {
        return Err(Error::Invalid {
            field: field("certData"),
            detail: format!("more than {MAX_DATA} bytes"),
        });
    }
    let data = String::from_utf8(raw).map_err(|_| Error::Invalid {
        field: field("certData"),
        detail: "not UTF-8 text".into(),
    })?;
    Ok(Requested {
        server: text("serverName")?,
        kind: text("certType")?,
        sub_type: text("certSubType")?,
        data,
    })
}

fn bad(detail: String) -> Error {
    Error::InvalidRequest(detail)
}

impl CertAdmin {
    /// Adds `items` (Argo's `RepositoryCertificate` JSON, `certData` base64); answers the items
    /// created or changed.
    pub async fn create(&self, items: &[Value], upsert: bool) -> Result<Vec<Value>, Error> {
        let mut cur = self.read().await?;
        let (mut save_ssh, mut save_tls) = (false, false);
        let mut created = Vec::new();
        for (i, v) in items.iter().enumerate() {
            let r = read_item(i, v)?;
            let host = match r.kind.as_str() {
                "ssh" => known_hosts::bare_host(&r.server),
                _ => r.server.as_str(),
            };
            if !valid_hostname(host) {
                return Err(bad(format!("invalid hostname in request: {host}")));
            }
            match r.kind.as_str() {
                "ssh" => save_ssh |= add_ssh(&mut cur.ssh, &r, upsert, &mut created)?,
                "https" => save_tls |= add_tls(&mut cur.tls, &r, upsert, &mut created)?,
                other => return Err(bad(format!("unknown certificate type: {other}"))),
            }
        }
        if save_ssh {
            self.save_ssh(&cur.ssh).await?;
        }
        if save_tls {
            self.save(TLS_CERTS_CM, cur.tls).await?;
        }
        Ok(created)
    }
}

fn add_ssh(
    list: &mut Vec<KnownHost>,
    r: &Requested,
    upsert: bool,
    created: &mut Vec<Value>,
) -> Result<bool, Error> {
    let entry = KnownHost {
        host: r.server.clone(),
        sub_type: r.sub_type.clone(),
        data: r.data.trim().to_owned(),
    };
    let (_, blob) = known_hosts::public_key(&entry).map_err(|d| Error::Invalid {
        field: "certData".into(),
        detail: d,
    })?;
    let existing = list
        .iter_mut()
        .find(|e| e.host == entry.host && e.sub_type == entry.sub_type);
    let changed = match existing {
        Some(e) if e.data == entry.data => false,
        Some(e) if upsert => {
            e.data = entry.data.clone();
            true
        }
        Some(e) => {
            return Err(bad(format!(
                "key for '{}' (subtype: '{}') already exists, and upsert was not specified",
                e.host, e.sub_type
            )));
        }
        None => {
            list.push(entry.clone());
            true
        }
    };
    if changed {
        let info = known_hosts::fingerprint(&blob);
        created.push(item(
            &entry.host,
            "ssh",
            &entry.sub_type,
            &info,
            Some(&entry.data),
        ));
    }
    Ok(changed)
}

fn add_tls(
    map: &mut std::collections::BTreeMap<String, String>,
    r: &Requested,
    upsert: bool,
    created: &mut Vec<Value>,
) -> Result<bool, Error> {
    if let Some(old) = map.get(&r.server)
        && *old != r.data
        && !upsert
    {
        return Err(bad(format!(
            "TLS certificate for server '{}' already exists, and upsert was not specified",
            r.server
        )));
    }
    let pems = tls::split(&r.data).map_err(|d| Error::Invalid {
        field: "certData".into(),
        detail: d,
    })?;
    if pems.is_empty() {
        return Err(bad("no valid PEM data received".into()));
    }
    for pem in &pems {
        tls::describe(pem).map_err(|d| Error::Invalid {
            field: "certData".into(),
            detail: d,
        })?;
    }
    if map.get(&r.server) == Some(&r.data) {
        return Ok(false);
    }
    map.insert(r.server.clone(), r.data.clone());
    for pem in &pems {
        created.push(item(&r.server, "https", "", "", Some(pem)));
    }
    Ok(true)
}

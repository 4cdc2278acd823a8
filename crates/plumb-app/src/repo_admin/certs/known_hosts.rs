//! SSH known hosts as Argo CD keeps them in `argocd-ssh-known-hosts-cm` (key `ssh_known_hosts`):
//! one `host key-type base64-key` line per entry. Argo CD `util/cert/cert.go`.

use base64::Engine as _;
use sha2::{Digest, Sha256};

/// Argo's bound on the entries of one stream (`CertificateMaxEntriesPerStream`).
pub const MAX_ENTRIES: usize = 256;

/// The key types an SSH server may present.
const KEY_TYPES: &[&str] = &[
    "ssh-rsa",
    "ssh-dss",
    "ssh-ed25519",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
];

/// One entry: the host (as written, `[host]:port` too), the key type and the key data (the
/// base64 key and what follows it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownHost {
    /// Host name, or `[host]:port`.
    pub host: String,
    /// The key type (`ssh-ed25519`, ...).
    pub sub_type: String,
    /// The base64 key (and any comment after it).
    pub data: String,
}

impl KnownHost {
    /// The line as the ConfigMap holds it.
    pub fn line(&self) -> String {
        format!("{} {} {}", self.host, self.sub_type, self.data)
    }
}

/// Argo's `ParseSSHKnownHostsFromData` and `TokenizeSSHKnownHostsEntry`: blank lines and
/// comments skipped, every other line split in three at spaces (lines that do not split are
/// skipped, as Argo skips them); more than [`MAX_ENTRIES`] is refused.
pub fn parse(text: &str) -> Result<Vec<KnownHost>, String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let mut parts = trimmed.splitn(3, ' ');
        let (Some(host), Some(sub_type), Some(data)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        out.push(KnownHost {
            host: host.into(),
            sub_type: sub_type.into(),
            data: data.into(),
        });
        if out.len() > MAX_ENTRIES {
            return Err(format!("limit exceeded: more than {MAX_ENTRIES} entries"));
        }
    }
    Ok(out)
}

/// The host names of an entry (comma-separated hosts; no hashed `|1|` hosts, no markers) and
/// its key's wire bytes, checked: the key decodes, and its type is the one the line names.
pub fn public_key(entry: &KnownHost) -> Result<(Vec<String>, Vec<u8>), String> {
    if entry.host.starts_with('@') || entry.host.starts_with('|') {
        return Err(format!(
            "host {:?}: markers and hashed host names are not accepted",
            entry.host
        ));
    }
    if !KEY_TYPES.contains(&entry.sub_type.as_str()) {
        return Err(format!(
            "key type {:?} is not an SSH key type",
            entry.sub_type
        ));
    }
    let b64 = entry.data.split_whitespace().next().unwrap_or_default();
    let blob = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|e| format!("host {:?}: the key is not base64: {e}", entry.host))?;
    let named = read_string(&blob)
        .ok_or_else(|| format!("host {:?}: the key data is truncated", entry.host))?;
    if named != entry.sub_type.as_bytes() {
        return Err(format!(
            "host {:?}: the key is not a {} key",
            entry.host, entry.sub_type
        ));
    }
    let hosts = entry.host.split(',').map(str::to_owned).collect();
    Ok((hosts, blob))
}

/// The first SSH wire-format string of `blob`.
fn read_string(blob: &[u8]) -> Option<&[u8]> {
    let len = u32::from_be_bytes(blob.get(..4)?.try_into().ok()?) as usize;
    blob.get(4..4 + len)
}

/// `SHA256:<base64 without padding>` of the key, as `ssh-keygen -l` and Argo show it.
pub fn fingerprint(blob: &[u8]) -> String {
    let digest = Sha256::digest(blob);
    format!(
        "SHA256:{}",
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(digest)
    )
}

/// The host name to check of a server name (`[host]:port` → `host`).
pub fn bare_host(server: &str) -> &str {
    server
        .strip_prefix('[')
        .and_then(|r| r.split_once("]:"))
        .filter(|(_, port)| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()))
        .map_or(server, |(h, _)| h)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// github.com's published Ed25519 host key.
    const GITHUB: &str = "github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl";

    #[test]
    fn parses_checks_and_fingerprints() {
        let all = parse(&format!("# comment\n\n{GITHUB}\nbad-line\n")).unwrap();
        assert_eq!(all.len(), 1);
        let (hosts, blob) = public_key(&all[0]).unwrap();
        assert_eq!(hosts, ["github.com"]);
        assert_eq!(
            fingerprint(&blob),
            "SHA256:+DiY3wvvV6TuJJhbpZisF/zLDA0zPMSvHdkr4UvCOqU"
        );
        assert_eq!(all[0].line(), GITHUB);
        let wrong_type = KnownHost {
            sub_type: "ssh-rsa".into(),
            ..all[0].clone()
        };
        assert!(
            public_key(&wrong_type)
                .unwrap_err()
                .contains("not a ssh-rsa key")
        );
        let not_b64 = KnownHost {
            data: "!!!".into(),
            ..all[0].clone()
        };
        assert!(public_key(&not_b64).unwrap_err().contains("not base64"));
        assert_eq!(bare_host("[git.example.com]:2222"), "git.example.com");
        assert_eq!(bare_host("git.example.com"), "git.example.com");
        let many = format!("{GITHUB}\n").repeat(MAX_ENTRIES + 1);
        assert!(parse(&many).unwrap_err().contains("limit exceeded"));
    }
}

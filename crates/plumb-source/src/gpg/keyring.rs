//! The public keys of `argocd-gpg-keys-cm` (key ID → ASCII-armored key, Argo's layout), checked
//! as Argo's `ListConfiguredGPGPublicKeys` checks them and imported into a private GnuPG home
//! made once per set of keys. A bad entry is an error naming it: every verification then fails
//! (closed) with that error until the ConfigMap is fixed.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use super::key_id::key_id;
use super::run::gpg;

/// The most keys the ConfigMap may hold.
pub const MAX_KEYS: usize = 1000;
/// The largest one entry (one armored public key), or a key file added at once, may be.
pub const MAX_KEY_BYTES: usize = 256 << 10;

const ARMOR_BEGIN: &str = "-----BEGIN PGP PUBLIC KEY BLOCK-----";

/// A public key as Argo's `GnuPGPublicKey` describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyInfo {
    /// The 16-digit key ID of the primary key.
    pub key_id: String,
    /// The primary key's fingerprint.
    pub fingerprint: String,
    /// The first user ID (`Name <email>`).
    pub owner: String,
    /// The key's validity in a keyring of its own (`unknown` for a valid key, as Argo shows it;
    /// `expired` or `revoked`).
    pub trust: String,
    /// Algorithm and size (`rsa4096`, `ed25519`).
    pub sub_type: String,
    /// The armored key.
    pub key_data: String,
}

/// The configured keys, and the GnuPG home holding them (made at first use).
#[derive(Debug, Default)]
pub struct GpgKeys {
    entries: BTreeMap<String, String>,
    home: OnceLock<Result<Arc<tempfile::TempDir>, String>>,
    verdicts: super::verdicts::Verdicts,
}

impl GpgKeys {
    /// The keys of `argocd-gpg-keys-cm`'s `data`.
    pub fn new(entries: BTreeMap<String, String>) -> Self {
        Self {
            entries,
            home: OnceLock::new(),
            verdicts: Default::default(),
        }
    }

    /// The entries as configured.
    pub fn entries(&self) -> &BTreeMap<String, String> {
        &self.entries
    }

    /// The verdicts already reached with these keys.
    pub(crate) fn verdicts(&self) -> &super::verdicts::Verdicts {
        &self.verdicts
    }

    /// The GnuPG home with every configured key, or why it cannot be made (the entry named).
    pub(crate) fn home(&self) -> Result<Arc<tempfile::TempDir>, String> {
        self.home
            .get_or_init(|| build(&self.entries).map(Arc::new))
            .clone()
    }
}

fn build(entries: &BTreeMap<String, String>) -> Result<tempfile::TempDir, String> {
    if entries.len() > MAX_KEYS {
        return Err(format!(
            "argocd-gpg-keys-cm holds {} keys, more than the limit of {MAX_KEYS}",
            entries.len()
        ));
    }
    let home = tempfile::Builder::new()
        .prefix("plumb-gnupg-")
        .tempdir()
        .map_err(|e| format!("creating a GnuPG home: {e}"))?;
    for (name, data) in entries {
        let named = |e: String| format!("argocd-gpg-keys-cm key {}: {e}", printable(name));
        let expected = key_id(name)
            .map_err(|_| named("not a valid GnuPG key ID (16 or 40 hex digits)".into()))?;
        let info = import(home.path(), data).map_err(named)?;
        if info.key_id != expected {
            return Err(named(format!(
                "key parsed for entry with key ID '{expected}' had different key ID '{}'",
                info.key_id
            )));
        }
    }
    Ok(home)
}

/// An entry name as it may be printed: control characters escaped, at most 64 characters.
fn printable(name: &str) -> String {
    let escaped: String = name.escape_debug().collect();
    match escaped.char_indices().nth(64) {
        Some((i, _)) => format!("{}...", &escaped[..i]),
        None => escaped,
    }
}

/// Checks one armored key (bounded, exactly one public key) and imports it into `home`.
fn import(home: &Path, data: &str) -> Result<KeyInfo, String> {
    let listed = list_one(data)?;
    let ran = gpg(home, &["--status-fd", "1", "--import"], data.as_bytes())?;
    if !ran.status.success() {
        return Err(format!(
            "gpg could not import it: {}",
            first_error(&ran.stderr)
        ));
    }
    Ok(listed)
}

fn check_armor(data: &str) -> Result<(), String> {
    if data.len() > MAX_KEY_BYTES {
        return Err(format!(
            "the key is {} bytes, more than the limit of {MAX_KEY_BYTES}",
            data.len()
        ));
    }
    if !data.trim_start().starts_with(ARMOR_BEGIN) {
        return Err(format!(
            "not an ASCII-armored public key (no {ARMOR_BEGIN})"
        ));
    }
    Ok(())
}

/// Every public key in `data` (bounded), read in a throwaway home of its own: Argo's
/// `ValidatePGPKeysFromString`. Used to show keys (`/api/v1/gpgkeys`) and to check them before
/// they are stored.
pub fn inspect_keys(data: &str) -> Result<Vec<KeyInfo>, String> {
    check_armor(data)?;
    let scratch = tempfile::Builder::new()
        .prefix("plumb-gnupg-check-")
        .tempdir()
        .map_err(|e| format!("creating a GnuPG home: {e}"))?;
    let ran = gpg(scratch.path(), &["--import"], data.as_bytes())?;
    if !ran.status.success() {
        return Err(format!("invalid key data: {}", first_error(&ran.stderr)));
    }
    let keys = list(scratch.path())?;
    if keys.is_empty() {
        return Err("invalid key data: no public key found".into());
    }
    let mut out = Vec::with_capacity(keys.len());
    for mut k in keys {
        let ran = gpg(
            scratch.path(),
            &["--armor", "--export", &k.fingerprint],
            b"",
        )?;
        k.key_data = if keys_len_one(data) {
            data.to_string()
        } else {
            ran.stdout
        };
        out.push(k);
    }
    Ok(out)
}

/// Whether `data` holds one armored block (kept as given then, as Argo stores what it got).
fn keys_len_one(data: &str) -> bool {
    data.matches(ARMOR_BEGIN).count() == 1
}

/// The one key in `data`; more or none is an error (Argo: each entry holds exactly one key).
fn list_one(data: &str) -> Result<KeyInfo, String> {
    let mut keys = inspect_keys(data)?;
    match keys.len() {
        1 => Ok(keys.remove(0)),
        n => Err(format!("more than one key found in input data ({n} keys)")),
    }
}

/// The keys of `home`, from `gpg --with-colons --list-keys`.
fn list(home: &Path) -> Result<Vec<KeyInfo>, String> {
    let ran = gpg(
        home,
        &["--with-colons", "--fixed-list-mode", "--list-keys"],
        b"",
    )?;
    if !ran.status.success() {
        return Err(format!("listing keys: {}", first_error(&ran.stderr)));
    }
    Ok(parse_colons(&ran.stdout))
}

/// `pub`, `fpr` and the first `uid` record of each key (GnuPG's `doc/DETAILS`).
fn parse_colons(out: &str) -> Vec<KeyInfo> {
    let mut keys: Vec<KeyInfo> = Vec::new();
    let mut want_fpr = false;
    for line in out.lines() {
        let f: Vec<&str> = line.split(':').collect();
        match f.first().copied() {
            Some("pub") if f.len() > 4 => {
                keys.push(KeyInfo {
                    key_id: f[4].to_string(),
                    trust: validity(f[1]).to_string(),
                    sub_type: sub_type(&f),
                    ..KeyInfo::default()
                });
                want_fpr = true;
            }
            Some("fpr") if want_fpr && f.len() > 9 => {
                if let Some(k) = keys.last_mut() {
                    k.fingerprint = f[9].to_string();
                }
                want_fpr = false;
            }
            Some("sub") => want_fpr = false,
            Some("uid") if f.len() > 9 => {
                if let Some(k) = keys.last_mut().filter(|k| k.owner.is_empty()) {
                    k.owner = unescape(f[9]);
                }
            }
            _ => {}
        }
    }
    keys
}

fn validity(v: &str) -> &'static str {
    match v {
        "e" => "expired",
        "r" => "revoked",
        "d" | "i" => "invalid",
        _ => "unknown",
    }
}

/// Argo's `subType` (`gpg --list-keys` prints `rsa4096`, `ed25519`).
fn sub_type(f: &[&str]) -> String {
    let bits = f.get(2).copied().unwrap_or_default();
    let curve = f.get(16).copied().unwrap_or_default();
    match f.get(3).copied().unwrap_or_default() {
        "1" | "2" | "3" => format!("rsa{bits}"),
        "17" => format!("dsa{bits}"),
        "16" | "20" => format!("elg{bits}"),
        _ if !curve.is_empty() => curve.to_string(),
        other => format!("algo{other}"),
    }
}

/// A `--with-colons` field: `\x3a` and friends decoded.
fn unescape(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && b.get(i + 1) == Some(&b'x')
            && let Some(v) = s
                .get(i + 2..i + 4)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The first line of gpg's complaint, bounded.
pub(crate) fn first_error(stderr: &str) -> String {
    let line = stderr
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no detail");
    line.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colons_give_argos_key_fields() {
        let out = "tru::1:1700000000:0:3:1:5\n\
            pub:-:255:22:4AEE18F83AFDEB23:1700000000:::-:::scSC:::::ed25519:::0:\n\
            fpr:::::::::0123456789ABCDEF01234567AEE18F83AFDEB234:\n\
            uid:-::::1700000000::HASH::Plumb Test \\x3cplumb@example.com\\x3e::::::::::0:\n\
            sub:-:255:18:1111222233334444:1700000000::::::e:::::cv25519::\n\
            fpr:::::::::FFFF:\n\
            pub:e:4096:1:1234567812345678:1600000000:1600000100::-:::sc:::::::0:\n\
            fpr:::::::::AAAA:\n\
            uid:e::::1600000000::H2::Old <old@example.com>::::::::::0:\n";
        let keys = parse_colons(out);
        assert_eq!(keys.len(), 2);
        assert_eq!(keys[0].key_id, "4AEE18F83AFDEB23");
        assert_eq!(keys[0].sub_type, "ed25519");
        assert_eq!(keys[0].owner, "Plumb Test <plumb@example.com>");
        assert_eq!(keys[0].trust, "unknown");
        assert!(keys[0].fingerprint.starts_with("0123"));
        assert_eq!(keys[1].sub_type, "rsa4096");
        assert_eq!(keys[1].trust, "expired");
        assert_eq!(keys[1].fingerprint, "AAAA");
    }

    #[test]
    fn entries_are_checked_before_gpg_sees_them() {
        assert!(
            check_armor("hello")
                .unwrap_err()
                .contains("not an ASCII-armored")
        );
        let huge = format!("{ARMOR_BEGIN}\n{}", "A".repeat(MAX_KEY_BYTES));
        assert!(check_armor(&huge).unwrap_err().contains("limit"));
        assert_eq!(printable("a\nb"), "a\\nb");
        assert_eq!(printable(&"x".repeat(100)).len(), 67);
    }
}

//! Random bytes, token ids and generated passwords, from the OS's generator.

use crate::error::{Error, Result};

/// Argo's generated admin password length.
const INITIAL_PASSWORD_LEN: usize = 16;

/// Random bytes from the OS.
pub(crate) fn random_bytes<const N: usize>() -> Result<[u8; N]> {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).map_err(|e| Error::Internal(format!("reading random bytes: {e}")))?;
    Ok(b)
}

/// A random version-4 UUID, the ids Argo gives tokens.
pub(crate) fn new_token_id() -> Result<String> {
    let mut b = random_bytes::<16>()?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    ))
}

pub(super) fn random_password() -> Result<String> {
    const LETTERS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut out = String::new();
    while out.len() < INITIAL_PASSWORD_LEN {
        for byte in random_bytes::<32>()? {
            // 248 = 4 * 62: no modulo bias.
            if byte < 248 && out.len() < INITIAL_PASSWORD_LEN {
                out.push(LETTERS[(byte % 62) as usize] as char);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_ids_are_uuid_v4_and_passwords_alphanumeric() {
        let id = new_token_id().expect("id");
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert_ne!(id, new_token_id().expect("id"));
        let p = random_password().expect("password");
        assert_eq!(p.len(), INITIAL_PASSWORD_LEN);
        assert!(p.chars().all(|c| c.is_ascii_alphanumeric()));
    }
}

//! Which Git provider sent a webhook, and whether it proves it knows the shared secret, each
//! with Argo CD's scheme and `argocd-secret` key: GitHub and Bitbucket Server sign the body
//! (HMAC-SHA256, `X-Hub-Signature-256` / `X-Hub-Signature`), Gogs and Gitea too (hex, no
//! prefix), GitLab and Bitbucket Cloud send the token or UUID itself, Azure DevOps uses Basic
//! authentication. With no secret configured for a provider its payloads are accepted
//! unverified, as in Argo CD; with one, a payload without a valid proof is refused.
//!
//! Every comparison is constant-time: `ring::hmac::verify` for signatures, `subtle` for tokens.

use std::collections::BTreeMap;

use axum::http::HeaderMap;
use base64::Engine;
use ring::hmac;
use subtle::ConstantTimeEq;

/// The provider a request comes from, detected by its headers in Argo CD's order (Gogs before
/// GitHub: Gogs and Gitea send GitHub's event header too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Provider {
    AzureDevOps,
    Gogs,
    GitHub,
    GitLab,
    BitbucketCloud,
    BitbucketServer,
}

impl Provider {
    pub(crate) fn detect(headers: &HeaderMap) -> Option<Self> {
        let has = |h: &str| headers.get(h).is_some_and(|v| !v.is_empty());
        if has("x-vss-activityid") {
            Some(Self::AzureDevOps)
        } else if has("x-gogs-event") {
            Some(Self::Gogs)
        } else if has("x-github-event") {
            Some(Self::GitHub)
        } else if has("x-gitlab-event") {
            Some(Self::GitLab)
        } else if has("x-hook-uuid") {
            Some(Self::BitbucketCloud)
        } else if has("x-event-key") {
            Some(Self::BitbucketServer)
        } else {
            None
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::AzureDevOps => "Azure DevOps",
            Self::Gogs => "Gogs",
            Self::GitHub => "GitHub",
            Self::GitLab => "GitLab",
            Self::BitbucketCloud => "Bitbucket",
            Self::BitbucketServer => "Bitbucket Server",
        }
    }
}

/// The webhook secrets of `argocd-secret` (values never logged or shown).
#[derive(Default, Clone)]
pub(crate) struct Secrets {
    github: Option<Vec<u8>>,
    gitlab: Option<Vec<u8>>,
    bitbucket_uuid: Option<Vec<u8>>,
    bitbucket_server: Option<Vec<u8>>,
    gogs: Option<Vec<u8>>,
    azure_username: Option<Vec<u8>>,
    azure_password: Option<Vec<u8>>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secrets(<redacted>)")
    }
}

impl Secrets {
    /// From the decoded data of `argocd-secret`; empty values count as unset, as in Argo.
    pub(crate) fn from_data(data: &BTreeMap<String, Vec<u8>>) -> Self {
        let get = |k: &str| data.get(k).filter(|v| !v.is_empty()).cloned();
        Self {
            github: get("webhook.github.secret"),
            gitlab: get("webhook.gitlab.secret"),
            bitbucket_uuid: get("webhook.bitbucket.uuid"),
            bitbucket_server: get("webhook.bitbucketserver.secret"),
            gogs: get("webhook.gogs.secret"),
            azure_username: get("webhook.azuredevops.username"),
            azure_password: get("webhook.azuredevops.password"),
        }
    }
}

/// Why a payload was refused (no secret material in the text).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Refused(pub(crate) String);

/// Checks the proof `provider`'s request carries against its secret.
pub(crate) fn verify(
    provider: Provider,
    secrets: &Secrets,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(), Refused> {
    let header = |h: &str| headers.get(h).and_then(|v| v.to_str().ok()).map(str::trim);
    match provider {
        Provider::GitHub => {
            let Some(secret) = &secrets.github else {
                return Ok(());
            };
            if let Some(sig) = header("x-hub-signature-256") {
                check_hmac(hmac::HMAC_SHA256, secret, body, sig.strip_prefix("sha256="))
            } else if let Some(sig) = header("x-hub-signature") {
                // Older GitHub Enterprise servers sign with SHA-1 only.
                check_hmac(
                    hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY,
                    secret,
                    body,
                    sig.strip_prefix("sha1="),
                )
            } else {
                Err(Refused("missing X-Hub-Signature-256 header".into()))
            }
        }
        Provider::BitbucketServer => {
            let Some(secret) = &secrets.bitbucket_server else {
                return Ok(());
            };
            let sig = header("x-hub-signature")
                .ok_or_else(|| Refused("missing X-Hub-Signature header".into()))?;
            check_hmac(hmac::HMAC_SHA256, secret, body, sig.strip_prefix("sha256="))
        }
        Provider::Gogs => {
            let Some(secret) = &secrets.gogs else {
                return Ok(());
            };
            let sig = header("x-gogs-signature")
                .or_else(|| header("x-gitea-signature"))
                .ok_or_else(|| Refused("missing X-Gogs-Signature header".into()))?;
            check_hmac(hmac::HMAC_SHA256, secret, body, Some(sig))
        }
        Provider::GitLab => {
            let Some(secret) = &secrets.gitlab else {
                return Ok(());
            };
            let token = header("x-gitlab-token")
                .ok_or_else(|| Refused("missing X-Gitlab-Token header".into()))?;
            check_equal(token.as_bytes(), secret, "X-Gitlab-Token does not match")
        }
        Provider::BitbucketCloud => {
            let Some(uuid) = &secrets.bitbucket_uuid else {
                return Ok(());
            };
            let got = header("x-hook-uuid")
                .ok_or_else(|| Refused("missing X-Hook-UUID header".into()))?;
            check_equal(got.as_bytes(), uuid, "X-Hook-UUID does not match")
        }
        Provider::AzureDevOps => {
            if secrets.azure_username.is_none() && secrets.azure_password.is_none() {
                return Ok(());
            }
            let (user, password) = header("authorization")
                .and_then(basic_credentials)
                .ok_or_else(|| Refused("missing Basic authorization".into()))?;
            let want_user = secrets.azure_username.as_deref().unwrap_or_default();
            let want_password = secrets.azure_password.as_deref().unwrap_or_default();
            // Both compared before deciding, so timing does not tell which one was wrong.
            let ok = user.as_slice().ct_eq(want_user) & password.as_slice().ct_eq(want_password);
            if bool::from(ok) {
                Ok(())
            } else {
                Err(Refused("basic auth verification failed".into()))
            }
        }
    }
}

fn check_hmac(
    algorithm: hmac::Algorithm,
    secret: &[u8],
    body: &[u8],
    hex_signature: Option<&str>,
) -> Result<(), Refused> {
    let signature = hex_signature
        .and_then(decode_hex)
        .ok_or_else(|| Refused("malformed signature header".into()))?;
    let key = hmac::Key::new(algorithm, secret);
    hmac::verify(&key, body, &signature).map_err(|_| Refused("HMAC verification failed".into()))
}

fn check_equal(got: &[u8], want: &[u8], refused: &str) -> Result<(), Refused> {
    if bool::from(got.ct_eq(want)) {
        Ok(())
    } else {
        Err(Refused(refused.into()))
    }
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || s.len() > 256 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn basic_credentials(value: &str) -> Option<(Vec<u8>, Vec<u8>)> {
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let colon = decoded.iter().position(|b| *b == b':')?;
    Some((decoded[..colon].to_vec(), decoded[colon + 1..].to_vec()))
}

/// Signs `body` as GitHub, Bitbucket Server, Gogs and Gitea do (hex HMAC-SHA256); for tests and
/// the bench script.
pub fn sign_sha256_hex(secret: &[u8], body: &[u8]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret);
    hmac::sign(&key, body)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn secrets() -> Secrets {
        let data: BTreeMap<String, Vec<u8>> = [
            ("webhook.github.secret", "gh-s3cret"),
            ("webhook.gitlab.secret", "gl-t0ken"),
            (
                "webhook.bitbucket.uuid",
                "{4b6c3e7a-0d1f-4c55-9b1a-2f0e8d7c6b5a}",
            ),
            ("webhook.bitbucketserver.secret", "bbs-s3cret"),
            ("webhook.gogs.secret", "gogs-s3cret"),
            ("webhook.azuredevops.username", "argocd"),
            ("webhook.azuredevops.password", "az-pass"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
        .collect();
        Secrets::from_data(&data)
    }

    fn headers(pairs: &[(&'static str, String)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).expect("header"));
        }
        h
    }

    const BODY: &[u8] = br#"{"ref":"refs/heads/main"}"#;

    #[test]
    fn github_sha256_valid_invalid_missing() {
        let s = secrets();
        let good = format!("sha256={}", sign_sha256_hex(b"gh-s3cret", BODY));
        let h = headers(&[("x-hub-signature-256", good)]);
        assert_eq!(verify(Provider::GitHub, &s, &h, BODY), Ok(()));
        let bad = format!("sha256={}", sign_sha256_hex(b"other", BODY));
        let h = headers(&[("x-hub-signature-256", bad)]);
        assert!(verify(Provider::GitHub, &s, &h, BODY).is_err());
        // A valid signature of another body.
        let h = headers(&[(
            "x-hub-signature-256",
            format!("sha256={}", sign_sha256_hex(b"gh-s3cret", b"{}")),
        )]);
        assert!(verify(Provider::GitHub, &s, &h, BODY).is_err());
        assert!(verify(Provider::GitHub, &s, &HeaderMap::new(), BODY).is_err());
        let h = headers(&[("x-hub-signature-256", "sha256=zz".into())]);
        assert!(verify(Provider::GitHub, &s, &h, BODY).is_err());
    }

    #[test]
    fn github_legacy_sha1() {
        let key = hmac::Key::new(hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY, b"gh-s3cret");
        let hex: String = hmac::sign(&key, BODY)
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let h = headers(&[("x-hub-signature", format!("sha1={hex}"))]);
        assert_eq!(verify(Provider::GitHub, &secrets(), &h, BODY), Ok(()));
        let h = headers(&[("x-hub-signature", format!("sha256={hex}"))]);
        assert!(verify(Provider::GitHub, &secrets(), &h, BODY).is_err());
    }

    #[test]
    fn unset_secret_accepts_unverified_as_argo_does() {
        let none = Secrets::default();
        for p in [
            Provider::GitHub,
            Provider::GitLab,
            Provider::BitbucketCloud,
            Provider::BitbucketServer,
            Provider::Gogs,
            Provider::AzureDevOps,
        ] {
            assert_eq!(verify(p, &none, &HeaderMap::new(), BODY), Ok(()), "{p:?}");
        }
    }

    #[test]
    fn every_provider_refuses_a_missing_proof_when_a_secret_is_set() {
        for p in [
            Provider::GitHub,
            Provider::GitLab,
            Provider::BitbucketCloud,
            Provider::BitbucketServer,
            Provider::Gogs,
            Provider::AzureDevOps,
        ] {
            assert!(
                verify(p, &secrets(), &HeaderMap::new(), BODY).is_err(),
                "{p:?}"
            );
        }
    }

    #[test]
    fn token_providers() {
        let s = secrets();
        let h = headers(&[("x-gitlab-token", "gl-t0ken".into())]);
        assert_eq!(verify(Provider::GitLab, &s, &h, BODY), Ok(()));
        let h = headers(&[("x-gitlab-token", "gl-t0ke".into())]);
        assert!(verify(Provider::GitLab, &s, &h, BODY).is_err());
        let h = headers(&[(
            "x-hook-uuid",
            "{4b6c3e7a-0d1f-4c55-9b1a-2f0e8d7c6b5a}".into(),
        )]);
        assert_eq!(verify(Provider::BitbucketCloud, &s, &h, BODY), Ok(()));
        let h = headers(&[(
            "x-hook-uuid",
            "{00000000-0000-0000-0000-000000000000}".into(),
        )]);
        assert!(verify(Provider::BitbucketCloud, &s, &h, BODY).is_err());
    }

    #[test]
    fn signed_providers() {
        let s = secrets();
        let h = headers(&[(
            "x-hub-signature",
            format!("sha256={}", sign_sha256_hex(b"bbs-s3cret", BODY)),
        )]);
        assert_eq!(verify(Provider::BitbucketServer, &s, &h, BODY), Ok(()));
        let h = headers(&[("x-gogs-signature", sign_sha256_hex(b"gogs-s3cret", BODY))]);
        assert_eq!(verify(Provider::Gogs, &s, &h, BODY), Ok(()));
        let h = headers(&[("x-gitea-signature", sign_sha256_hex(b"gogs-s3cret", BODY))]);
        assert_eq!(verify(Provider::Gogs, &s, &h, BODY), Ok(()));
        let h = headers(&[("x-gogs-signature", sign_sha256_hex(b"bbs-s3cret", BODY))]);
        assert!(verify(Provider::Gogs, &s, &h, BODY).is_err());
    }

    #[test]
    fn azure_basic_auth() {
        let s = secrets();
        let b64 = |v: &str| base64::engine::general_purpose::STANDARD.encode(v);
        let h = headers(&[("authorization", format!("Basic {}", b64("argocd:az-pass")))]);
        assert_eq!(verify(Provider::AzureDevOps, &s, &h, BODY), Ok(()));
        for wrong in ["argocd:az-pas", "argoc:az-pass", "argocd", ":"] {
            let h = headers(&[("authorization", format!("Basic {}", b64(wrong)))]);
            assert!(
                verify(Provider::AzureDevOps, &s, &h, BODY).is_err(),
                "{wrong}"
            );
        }
        let h = headers(&[("authorization", "Bearer az-pass".into())]);
        assert!(verify(Provider::AzureDevOps, &s, &h, BODY).is_err());
    }

    #[test]
    fn detection_order_follows_argo() {
        let h = headers(&[
            ("x-github-event", "push".into()),
            ("x-gogs-event", "push".into()),
        ]);
        assert_eq!(Provider::detect(&h), Some(Provider::Gogs));
        let h = headers(&[
            ("x-event-key", "repo:push".into()),
            ("x-hook-uuid", "u".into()),
        ]);
        assert_eq!(Provider::detect(&h), Some(Provider::BitbucketCloud));
        let h = headers(&[("x-event-key", "repo:refs_changed".into())]);
        assert_eq!(Provider::detect(&h), Some(Provider::BitbucketServer));
        assert_eq!(Provider::detect(&HeaderMap::new()), None);
    }

    #[test]
    fn secrets_do_not_print() {
        assert_eq!(format!("{:?}", secrets()), "Secrets(<redacted>)");
    }
}

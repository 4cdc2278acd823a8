//! The `argocd.token` cookie split over several cookies when the token is longer than a
//! browser keeps in one (an ID token with many groups), read back joined. Own code because the
//! chunk format is Argo's (`httputil.MakeCookieMetadata` and `JoinCookies`, util/http/http.go):
//! `argocd.token=<n>:<first chunk>`, then `argocd.token-1`, ... `argocd.token-<n-1>`.

use axum::http::{HeaderMap, header};

/// Argo's session cookie (`common.AuthCookieName`).
pub(crate) const COOKIE: &str = "argocd.token";

/// Whether the session cookie is marked `Secure`: yes when the server speaks TLS, as
/// argocd-server omits it only with `--insecure`.
#[derive(Clone, Copy)]
pub(crate) struct SecureCookie(pub(crate) bool);

/// Argo's `maxCookieLength`: a whole `Set-Cookie` value, name and attributes included.
const MAX_COOKIE_LENGTH: usize = 4093;
/// Argo's default for `ARGOCD_MAX_COOKIE_NUMBER`: browsers keep at least 30 per site.
const DEFAULT_MAX_COOKIES: usize = 20;

/// The attributes of the session and login-state cookies (Argo's `SetTokenCookie` flags):
/// HTTP-only, `SameSite=Lax`, `Secure` under TLS.
pub(crate) fn attributes(secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("Path=/; SameSite=Lax; HttpOnly{secure}")
}

/// Argo's `ARGOCD_MAX_COOKIE_NUMBER`, else 20.
fn max_cookies() -> usize {
    std::env::var("ARGOCD_MAX_COOKIE_NUMBER")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_MAX_COOKIES)
}

/// The longest token a request may carry: what the most cookies allowed can hold (Argo joins
/// as many chunks as `ARGOCD_MAX_COOKIE_NUMBER` allows, each at most a cookie's value long; a
/// bearer token gets the same bound). About 80 KiB with the default 20.
pub(crate) fn max_token_bytes() -> usize {
    max_cookies().saturating_mul(max_value_length(""))
}

/// Argo's `maxCookieValueLength`: room for the value beside `key-<i>=` and `; attributes`.
fn max_value_length(attributes: &str) -> usize {
    let room = MAX_COOKIE_LENGTH - (COOKIE.len() + 3);
    if attributes.is_empty() {
        room
    } else {
        room.saturating_sub(attributes.len() + 2)
    }
}

/// The `Set-Cookie` values that carry `token` (Argo's `MakeCookieMetadata`), each with
/// `attributes`; an error naming the sizes when more than `ARGOCD_MAX_COOKIE_NUMBER` are needed.
pub(crate) fn set_cookies(token: &str, attributes: &str) -> Result<Vec<String>, String> {
    split(
        token,
        attributes,
        max_value_length(attributes),
        max_cookies(),
    )
}

fn split(token: &str, attributes: &str, chunk: usize, max: usize) -> Result<Vec<String>, String> {
    // Tokens are base64url and dots; a byte split of anything else could cut a character.
    if !token.is_ascii() || chunk == 0 {
        return Err("the authentication token cannot be stored in a cookie".into());
    }
    let chunks: Vec<&str> = token
        .as_bytes()
        .chunks(chunk)
        .map(|c| std::str::from_utf8(c).unwrap_or_default())
        .collect();
    let n = chunks.len().max(1);
    if n > max {
        return Err(format!(
            "the authentication token is {} characters long and requires {n} cookies but the max number of cookies is {max}. Contact your Argo CD administrator to increase the max number of cookies",
            token.len()
        ));
    }
    let suffix = if attributes.is_empty() {
        String::new()
    } else {
        format!("; {attributes}")
    };
    if chunks.is_empty() {
        return Ok(vec![format!("{COOKIE}={suffix}")]);
    }
    Ok(chunks
        .iter()
        .enumerate()
        .map(|(i, c)| match (i, n) {
            (0, 1) => format!("{COOKIE}={c}{suffix}"),
            (0, _) => format!("{COOKIE}={n}:{c}{suffix}"),
            _ => format!("{COOKIE}-{i}={c}{suffix}"),
        })
        .collect())
}

/// The request's cookies as (name, value) pairs, in order.
fn pairs(headers: &HeaderMap) -> impl Iterator<Item = (&str, &str)> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .flat_map(|h| h.split(';'))
        .filter_map(|p| p.trim().split_once('='))
}

/// The token the request's `argocd.token` cookies carry, joined (Argo's `JoinCookies`): None
/// without the cookie; an error when the chunk count is not a number, is more than
/// `ARGOCD_MAX_COOKIE_NUMBER` allows, a chunk is missing, or the whole is over `max_len`.
pub(crate) fn join(headers: &HeaderMap, max_len: usize) -> Result<Option<String>, String> {
    join_pairs(pairs(headers), max_len, max_cookies())
}

fn join_pairs<'a>(
    pairs: impl Iterator<Item = (&'a str, &'a str)>,
    max_len: usize,
    max: usize,
) -> Result<Option<String>, String> {
    let mut first = None;
    let mut rest = std::collections::BTreeMap::new();
    for (k, v) in pairs {
        if k == COOKIE {
            // The first of a name wins, as the browser sends the most specific path first.
            first.get_or_insert(v);
        } else if let Some(i) = k
            .strip_prefix(COOKIE)
            .and_then(|s| s.strip_prefix('-'))
            .and_then(|i| i.parse::<usize>().ok())
        {
            rest.entry(i).or_insert(v);
        }
    }
    let Some(first) = first else { return Ok(None) };
    let (n, head) = match first.split_once(':') {
        None => (1, first),
        Some((n, head)) if !head.contains(':') => {
            let n: usize = n
                .parse()
                .map_err(|_| format!("invalid cookie for key {COOKIE}"))?;
            (n, head)
        }
        Some(_) => return Err(format!("invalid cookie for key {COOKIE}")),
    };
    if n == 0 || n > max {
        return Err(format!(
            "invalid cookie for key {COOKIE}: {n} chunks (at most {max})"
        ));
    }
    let mut token = String::from(head);
    for i in 1..n {
        let chunk = rest
            .get(&i)
            .ok_or_else(|| format!("the session cookie {COOKIE}-{i} is missing; log in again"))?;
        token.push_str(chunk);
        if token.len() > max_len {
            return Err("invalid session: token is too long".into());
        }
    }
    if token.len() > max_len {
        return Err("invalid session: token is too long".into());
    }
    Ok(Some(token).filter(|t| !t.is_empty()))
}

/// `Set-Cookie` values clearing `argocd.token` and every chunk the request carries (Argo's
/// logout clears each cookie named with the prefix), each with `attributes`.
pub(crate) fn clear_cookies(headers: &HeaderMap, attributes: &str) -> Vec<String> {
    let mut names: std::collections::BTreeSet<&str> = pairs(headers)
        .map(|(k, _)| k)
        .filter(|k| {
            *k == COOKIE
                || k.strip_prefix(COOKIE)
                    .and_then(|s| s.strip_prefix('-'))
                    .is_some_and(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    names.insert(COOKIE);
    names
        .into_iter()
        .map(|k| format!("{k}=; {attributes}; Max-Age=0"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn join_of(set: &[String]) -> Result<Option<String>, String> {
        let pairs: Vec<(String, String)> = set
            .iter()
            .map(|c| {
                let pair = c.split(';').next().unwrap_or_default();
                let (k, v) = pair.split_once('=').unwrap_or_default();
                (k.to_string(), v.to_string())
            })
            .collect();
        join_pairs(
            pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            1 << 20,
            DEFAULT_MAX_COOKIES,
        )
    }

    const ATTRS: &str = "Path=/; SameSite=Lax; HttpOnly; Secure";

    #[test]
    fn the_token_limit_is_what_the_cookies_can_carry() {
        // The longest token Argo's split stores (Secure attributes, 20 cookies) is accepted
        // whole, as Argo's JoinCookies accepts it; the old 8 KiB limit refused it.
        let attributes = attributes(true);
        let longest = "a".repeat(DEFAULT_MAX_COOKIES * max_value_length(&attributes));
        let set = set_cookies(&longest, &attributes).expect("fits 20 cookies");
        assert_eq!(set.len(), DEFAULT_MAX_COOKIES);
        assert!(longest.len() > 64 * 1024 && longest.len() <= max_token_bytes());
        let pairs: Vec<(String, String)> = set
            .iter()
            .map(|c| {
                let pair = c.split(';').next().unwrap_or_default();
                let (k, v) = pair.split_once('=').unwrap_or_default();
                (k.to_string(), v.to_string())
            })
            .collect();
        let joined = join_pairs(
            pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            max_token_bytes(),
            DEFAULT_MAX_COOKIES,
        );
        assert_eq!(joined, Ok(Some(longest.clone())));
        // One byte more than the cookies can hold is not a token this server issues.
        assert!(set_cookies(&format!("{longest}a"), &attributes).is_err());
        assert_eq!(
            max_token_bytes(),
            DEFAULT_MAX_COOKIES * (MAX_COOKIE_LENGTH - COOKIE.len() - 3)
        );
    }

    #[test]
    fn a_short_token_is_one_cookie_as_before() {
        let c = set_cookies("a.b.c", ATTRS).expect("cookies");
        assert_eq!(c, vec![format!("argocd.token=a.b.c; {ATTRS}")]);
        assert_eq!(join_of(&c).expect("join").as_deref(), Some("a.b.c"));
    }

    #[test]
    fn a_long_token_is_split_as_argo_and_joined_back() {
        let token: String = (0..10_000)
            .map(|i| (b'a' + (i % 26) as u8) as char)
            .collect();
        let c = set_cookies(&token, ATTRS).expect("cookies");
        let room = MAX_COOKIE_LENGTH - ("argocd.token".len() + 3) - (ATTRS.len() + 2);
        assert_eq!(c.len(), token.len().div_ceil(room));
        assert!(c[0].starts_with(&format!("argocd.token=3:{}", &token[..10])));
        assert!(c[1].starts_with("argocd.token-1="));
        assert!(c[2].starts_with("argocd.token-2="));
        assert!(c.iter().all(|x| x.len() <= MAX_COOKIE_LENGTH), "each fits");
        assert!(c.iter().all(|x| x.ends_with(ATTRS)));
        assert_eq!(join_of(&c).expect("join"), Some(token));
    }

    #[test]
    fn too_many_chunks_is_refused_with_argos_message() {
        let token = "x".repeat(100);
        let err = split(&token, "", 10, 5).expect_err("refused");
        assert!(
            err.contains("requires 10 cookies but the max number of cookies is 5"),
            "{err}"
        );
    }

    #[test]
    fn hostile_cookies_are_refused() {
        let refuse = |pairs: &[(&str, &str)]| join_pairs(pairs.iter().copied(), 100, 20);
        assert_eq!(refuse(&[]).expect("none"), None);
        assert!(refuse(&[("argocd.token", "x:1:2")]).is_err());
        assert!(refuse(&[("argocd.token", "lots:abc")]).is_err());
        assert!(refuse(&[("argocd.token", "0:abc")]).is_err());
        assert!(
            refuse(&[("argocd.token", "999999999:abc")]).is_err(),
            "a huge count"
        );
        let missing = refuse(&[("argocd.token", "3:abc"), ("argocd.token-1", "d")]);
        assert!(
            missing
                .expect_err("missing")
                .contains("argocd.token-2 is missing")
        );
        let long = "y".repeat(60);
        let too_long = refuse(&[
            ("argocd.token", "2:abc"),
            ("argocd.token-1", &long),
            ("argocd.token", "x"),
        ]);
        assert!(too_long.is_ok(), "63 bytes fit");
        let longer = "y".repeat(99);
        let err = refuse(&[("argocd.token", "2:abc"), ("argocd.token-1", &longer)]);
        assert!(err.expect_err("too long").contains("too long"));
        // Other cookies with the prefix are not chunks.
        let ok = refuse(&[
            ("argocd.tokenx", "z"),
            ("argocd.token", "abc"),
            ("argocd.token-x", "q"),
        ]);
        assert_eq!(ok.expect("join").as_deref(), Some("abc"));
    }

    #[test]
    fn logout_clears_every_chunk_sent() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            "argocd.token=3:a; other=1; argocd.token-1=b; argocd.token-2=c; argocd.tokenx=1"
                .parse()
                .expect("header"),
        );
        let c = clear_cookies(&h, "Path=/");
        assert_eq!(
            c,
            vec![
                "argocd.token=; Path=/; Max-Age=0",
                "argocd.token-1=; Path=/; Max-Age=0",
                "argocd.token-2=; Path=/; Max-Age=0"
            ]
        );
        assert_eq!(clear_cookies(&HeaderMap::new(), "Path=/").len(), 1);
    }
}

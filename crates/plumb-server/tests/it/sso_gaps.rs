//! Argo's session cookie split over several cookies for a large ID token (`argocd.token`,
//! `argocd.token-1`: a Dex user in 150 groups), read back joined and cleared on logout; and
//! groups from the provider's userinfo endpoint (`enableUserInfoGroups`) with the real Dex used
//! directly as an OIDC provider: cached for `userInfoCacheExpiration`, and a session whose
//! groups cannot be fetched refused with a message that names the endpoint.

use plumb_server::ThrottleConfig;
use plumb_testenv::dex::{Dex, PASSWORD_HASH, free_port};
use serde_json::{Value, json};

use crate::authn::{AuthStack, claims};
use crate::sso::{new_browser, sso_login, start_dex};
use plumb_testenv::dex::{Browser, enc};

const GROUPS: usize = 150;

fn group(i: usize) -> String {
    format!("ssoui-large-group-{i:03}-padding")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_id_token_is_split_over_cookies_and_joined_back() {
    let port = free_port();
    let s = AuthStack::start_tuned("sso-cookies", ThrottleConfig::default(), |c| {
        c.dex_server = format!("http://127.0.0.1:{port}");
    })
    .await;
    let groups: Vec<String> = (0..GROUPS).map(group).collect();
    let dex = format!(
        "connectors:\n- type: mockCallback\n  id: mock\n  name: Example\nenablePasswordDB: true\n\
         staticPasswords:\n- email: big@example.com\n  hash: \"{PASSWORD_HASH}\"\n  username: big\n  userID: ssoui-big\n  groups: [{}]\n",
        groups.join(", ")
    );
    s.set_config_map("argocd-cm", &[("url", &s.base), ("dex.config", &dex)])
        .await;
    let _dex = start_dex(&s, port).await;

    let mut b = new_browser(&s);
    let (_, first) = sso_login(&s, &mut b, "local", ("big@example.com", "password")).await;
    // Argo's format: `argocd.token=<n>:<first chunk>`, then `argocd.token-1`...
    let (n, head) = first.split_once(':').expect("a chunk count");
    assert_eq!(n, "2", "a token of this size takes two cookies");
    let rest = b
        .cookies
        .get("argocd.token-1")
        .expect("argocd.token-1")
        .clone();
    assert!(!b.cookies.contains_key("argocd.token-2"));
    let token = format!("{head}{rest}");
    assert!(token.len() > 4096, "{} bytes", token.len());
    assert_eq!(claims(&token)["groups"], json!(groups));

    // The browser's cookies are the session, joined by the server.
    let info = b.get(&format!("{}/api/v1/session/userinfo", s.base)).await;
    let info: Value = serde_json::from_str(&info.body).expect("json");
    assert_eq!(info["loggedIn"], true, "{info}");
    assert_eq!(info["groups"], json!(groups));
    // The same token as a bearer token (what the CLI stores).
    assert_eq!(
        s.get("/api/v1/session/userinfo", &token).await.1["groups"],
        json!(groups)
    );
    // A missing chunk is a clear refusal, not a half token.
    let resp = s
        .http
        .get(format!("{}/api/v1/applications", s.base))
        .header("cookie", format!("argocd.token={first}"))
        .send()
        .await
        .expect("request");
    assert_eq!(resp.status(), 401);
    let text = resp.text().await.expect("body");
    assert!(text.contains("argocd.token-1 is missing"), "{text}");
    assert!(!text.contains(head), "the token is not echoed");

    // Logout clears every chunk.
    let out = b.get(&format!("{}/auth/logout", s.base)).await;
    assert_eq!(out.status, 303, "{}", out.body);
    assert!(
        !b.cookies.keys().any(|k| k.starts_with("argocd.token")),
        "{:?}",
        b.cookies.keys()
    );
    let info = b.get(&format!("{}/api/v1/session/userinfo", s.base)).await;
    let info: Value = serde_json::from_str(&info.body).expect("json");
    assert_eq!(info["loggedIn"], false, "{info}");
}

/// Dex as a provider used directly (`oidc.config`), its issuer on Dex's own address.
fn direct_dex_config(port: u16, base: &str) -> String {
    format!(
        "issuer: http://127.0.0.1:{port}/dex\nstorage:\n  type: memory\nweb:\n  http: 127.0.0.1:{port}\n\
         oauth2:\n  skipApprovalScreen: true\n\
         connectors:\n- type: mockCallback\n  id: mock\n  name: Example\nenablePasswordDB: true\n\
         staticPasswords:\n- email: admin@example.com\n  hash: \"{PASSWORD_HASH}\"\n  username: admin\n  userID: ssoui-direct\n  groups: [direct-devs]\n\
         staticClients:\n- id: plumb-direct\n  name: Plumb\n  secret: direct-secret\n  redirectURIs: ['{base}/auth/callback']\n"
    )
}

/// A login through `/auth/login` at a provider used directly: the session token.
pub(crate) async fn direct_login(
    s: &AuthStack,
    b: &mut Browser,
    connector: &str,
    login: (&str, &str),
) -> String {
    let start = b
        .get(&format!(
            "{}/auth/login?return_url={}",
            s.base,
            enc("/applications")
        ))
        .await;
    assert_eq!(start.status, 303, "{}", start.body);
    let to_dex = start.location.expect("location");
    let callback = b
        .follow_to(
            to_dex,
            &format!("{}/auth/callback", s.base),
            connector,
            login,
        )
        .await;
    let done = b.get(&callback).await;
    assert_eq!(done.status, 303, "{}", done.body);
    b.cookies
        .get("argocd.token")
        .expect("session cookie")
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_from_the_userinfo_endpoint_are_cached_and_required() {
    let port = free_port();
    let s = AuthStack::start("sso-userinfo", ThrottleConfig::default()).await;
    s.set_secret(&[("oidc.direct.secret", "direct-secret")])
        .await;
    let oidc = format!(
        "name: Dex\nissuer: http://127.0.0.1:{port}/dex\nclientID: plumb-direct\nclientSecret: $oidc.direct.secret\n\
         requestedScopes: [openid, profile, email, groups]\n\
         enableUserInfoGroups: true\nuserInfoPath: /userinfo\nuserInfoCacheExpiration: 5m\n"
    );
    s.set_config_map("argocd-cm", &[("url", &s.base), ("oidc.config", &oidc)])
        .await;
    let dex = Dex::start(
        &direct_dex_config(port, &s.base),
        &format!("http://127.0.0.1:{port}/dex/.well-known/openid-configuration"),
    )
    .await;

    let mut b = new_browser(&s);
    let author = direct_login(&s, &mut b, "mock", ("", "")).await;
    let (code, info) = s.get("/api/v1/session/userinfo", &author).await;
    assert_eq!(code, 200, "{info}");
    assert_eq!(info["groups"], json!(["authors"]), "{info}");
    // A second user logs in but asks nothing yet: no groups cached for them.
    let mut other = new_browser(&s);
    let local = direct_login(&s, &mut other, "local", ("admin@example.com", "password")).await;

    // The provider goes away: the first user's groups come from the cache; the second user's
    // cannot be fetched, so the session is refused, naming the userinfo endpoint.
    drop(dex);
    let (code, info) = s.get("/api/v1/session/userinfo", &author).await;
    assert_eq!(code, 200, "{info}");
    assert_eq!(info["groups"], json!(["authors"]), "{info}");
    let (code, body) = s.get("/api/v1/applications", &local).await;
    assert_eq!(code, 401, "{body}");
    let msg = body["message"].as_str().unwrap_or_default();
    assert!(msg.contains("user info endpoint"), "{msg}");
    assert!(msg.contains("/dex/userinfo"), "{msg}");
    assert!(!msg.contains(&local), "the token is not echoed");
}

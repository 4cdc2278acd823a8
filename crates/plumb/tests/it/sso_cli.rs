//! `plumb login --sso`, the renewal of its tokens and `plumb relogin` against the real Dex
//! (`scripts/dex build`), used directly through `oidc.config` with a public client for the CLI
//! (any loopback callback port, as Dex allows public clients without redirect URIs): the CLI
//! prints the login URL (`--sso-launch-browser=false`), a scripted browser logs in on Dex's own
//! password page and lands on the CLI's localhost callback; the stored ID token then works for
//! `plumb proj list`, is renewed with the refresh token once expired (Dex's `expiry.idTokens`
//! is short here), and a refresh that fails says to run `plumb relogin`. Callbacks with a wrong
//! state or the provider's error are refused. No token ever appears in the CLI's output.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use plumb_testenv::dex::{
    Browser, Dex, LOCAL_USER, LOCAL_USER_ID, PASSWORD_HASH, attr_containing, form, free_port,
};
use plumb_testenv::process::initial_admin_password;
use serde_json::{Value, json};

use crate::app::{control_namespace, env, kubectl_apply, text};
use crate::server_cli::{Killed, login_admin, remote, start_server_with};

/// How long Dex's ID tokens live here: short, so the refresh is exercised.
const ID_TOKEN_LIFETIME: &str = "6s";

/// How long Dex's device codes live: long enough for the scripted browser and a few polls,
/// short enough to see one expire.
const DEVICE_CODE_LIFETIME_SECS: u64 = 30;

/// Dex used directly: the server's confidential client and the CLI's public one. Its storage
/// is the test's namespace (Dex's kubernetes storage): at the pinned Dex commit, the memory
/// storage deadlocks on a refresh (`UpdateRefreshToken` holds its lock while the updater
/// reads the offline session under the same lock).
fn dex_yaml(port: u16, server: &str, kubeconfig: &Path) -> String {
    format!(
        "issuer: http://127.0.0.1:{port}/dex\nstorage: {{type: kubernetes, config: {{kubeConfigFile: '{}'}}}}\nweb: {{http: '127.0.0.1:{port}'}}\n\
         expiry: {{idTokens: '{ID_TOKEN_LIFETIME}', deviceRequests: '{DEVICE_CODE_LIFETIME_SECS}s'}}\noauth2: {{skipApprovalScreen: true}}\n\
         enablePasswordDB: true\n\
         staticPasswords:\n- email: {}\n  hash: \"{PASSWORD_HASH}\"\n  username: admin\n  userID: {LOCAL_USER_ID}\n\
         staticClients:\n- id: plumb-server\n  name: Plumb\n  secret: server-secret\n  redirectURIs: ['https://{server}/auth/callback']\n\
         - id: plumb-cli\n  name: Plumb CLI\n  public: true\n\
         - id: plumb-device\n  name: Plumb CLI (device)\n  public: true\n  redirectURIs: ['/dex/device/callback']\n",
        kubeconfig.display(),
        LOCAL_USER.0
    )
}

/// The test cluster's kubeconfig with `ns` as the namespace (where Dex keeps its objects).
fn dex_kubeconfig(ns: &str, path: &Path) {
    let out = env()
        .kubectl()
        .args([
            "config",
            "view",
            "--raw",
            "--minify",
            "--flatten",
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut cfg: Value = serde_json::from_slice(&out.stdout).unwrap();
    cfg["contexts"][0]["context"]["namespace"] = json!(ns);
    std::fs::write(path, cfg.to_string()).unwrap();
}

/// A plumb server whose argocd-cm points at Dex, and that Dex.
struct Stack {
    ns: plumb_testenv::TestNamespace,
    _server: Killed,
    addr: SocketAddr,
    dex: Dex,
    dex_port: u16,
    home: tempfile::TempDir,
    _cache: tempfile::TempDir,
    rt: tokio::runtime::Runtime,
}

fn start(prefix: &str) -> Stack {
    start_with_cli(prefix, "plumb-cli")
}

/// [`start`] with `cli` as `cliClientID`.
fn start_with_cli(prefix: &str, cli: &str) -> Stack {
    let ns = control_namespace(prefix);
    let cache = tempfile::tempdir().unwrap();
    let plugins = cache.path().join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    let (server, addr) = start_server_with(
        ns.name(),
        &cache.path().join("server"),
        &plugins,
        &["--metrics-addr", "off"],
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dex_port = free_port();
    let issuer = format!("http://127.0.0.1:{dex_port}/dex");
    let kubeconfig = cache.path().join("dex-kubeconfig.json");
    dex_kubeconfig(ns.name(), &kubeconfig);
    let dex = rt.block_on(Dex::start(
        &dex_yaml(dex_port, &addr.to_string(), &kubeconfig),
        &format!("{issuer}/.well-known/openid-configuration"),
    ));
    let oidc = format!(
        "name: Dex\nissuer: {issuer}\nclientID: plumb-server\nclientSecret: server-secret\ncliClientID: {cli}\n"
    );
    for (name, data) in [
        (
            "argocd-cm",
            json!({"url": format!("https://{addr}"), "oidc.config": oidc}),
        ),
        ("argocd-rbac-cm", json!({"policy.default": "role:readonly"})),
    ] {
        kubectl_apply(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns.name(),
                         "labels": {"app.kubernetes.io/part-of": "argocd"}},
            "data": data}));
    }
    let stack = Stack {
        ns,
        _server: server,
        addr,
        dex,
        dex_port,
        home: tempfile::tempdir().unwrap(),
        _cache: cache,
        rt,
    };
    stack.wait_for_sso(cli);
    stack
}

impl Stack {
    fn server(&self) -> String {
        self.addr.to_string()
    }

    /// Until the server's settings name the provider (it reads argocd-cm as it changes).
    fn wait_for_sso(&self, cli: &str) {
        let url = format!("https://{}/api/v1/settings", self.addr);
        let deadline = Instant::now() + Duration::from_secs(60);
        let http = reqwest::Client::builder()
            .danger_accept_invalid_certs(true)
            .build()
            .unwrap();
        loop {
            let settings: Value = self.rt.block_on(async {
                let r = http.get(&url).send().await.unwrap();
                serde_json::from_str(&r.text().await.unwrap()).unwrap()
            });
            if settings.pointer("/oidcConfig/cliClientID") == Some(&json!(cli))
                && settings.get("ssoUnavailable").is_none()
            {
                return;
            }
            assert!(Instant::now() < deadline, "SSO never ready: {settings}");
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// `plumb ARGS` started with piped output, as [`remote`] runs it.
    fn spawn(&self, args: &[&str]) -> Child {
        Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args(args)
            .env_clear()
            .env("HOME", self.home.path())
            .env("PATH", self.home.path().join("empty-bin"))
            .env("TZ", "UTC")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn run(&self, args: &[&str]) -> Output {
        remote(self.home.path(), args)
    }

    fn config(&self) -> Value {
        let text = std::fs::read_to_string(self.home.path().join(".config/plumb/config")).unwrap();
        let docs = plumb_yaml::read_documents(&text, "config").unwrap();
        docs.into_iter().next().unwrap().value
    }

    /// (auth-token, refresh-token) of the context named after the server.
    fn tokens(&self) -> (String, String) {
        let cfg = self.config();
        let user = cfg["users"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["name"] == self.server().as_str())
            .unwrap_or_else(|| panic!("no user in {cfg}"))
            .clone();
        let s = |k: &str| user[k].as_str().unwrap_or_default().to_string();
        (s("auth-token"), s("refresh-token"))
    }
}

/// A CLI login waiting for its browser: the authorization URL it printed.
struct Pending {
    child: Child,
    url: String,
    printed: String,
}

/// Starts `args` (a login) and reads its output up to the URL to paste into a browser.
fn pending(s: &Stack, args: &[&str]) -> Pending {
    let mut child = s.spawn(args);
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut printed = String::new();
    let url = loop {
        let mut line = String::new();
        if out.read_line(&mut line).unwrap() == 0 {
            let mut err = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            panic!("the login printed no URL:\n{printed}\n{err}");
        }
        printed.push_str(&line);
        if let Some((_, url)) = line.split_once("into your preferred browser: ") {
            break url.trim().to_string();
        }
    };
    // The rest of stdout is read when the login ends.
    child.stdout = Some(out.into_inner());
    Pending {
        child,
        url,
        printed,
    }
}

impl Pending {
    /// Waits for the CLI: (exit code, everything it printed).
    fn finish(mut self) -> (Option<i32>, String) {
        let mut rest = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut rest)
            .unwrap();
        let mut err = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let code = self.child.wait().unwrap().code();
        (code, format!("{}{rest}{err}", self.printed))
    }
}

/// The scripted browser through Dex's password page to the CLI's callback; the callback
/// page's (status, body) and the code Dex issued.
fn browse(s: &Stack, url: &str, port: u16) -> (u16, String, String) {
    s.rt.block_on(async {
        let mut b = Browser::new(&format!("http://127.0.0.1:{}", s.dex_port), None);
        let stop = format!("http://localhost:{port}/auth/callback");
        let callback = b
            .follow_to(url.to_string(), &stop, "local", LOCAL_USER)
            .await;
        let query = callback.split_once('?').map(|(_, q)| q).unwrap_or_default();
        let code = form_urlencoded::parse(query.as_bytes())
            .find(|(k, _)| k == "code")
            .map(|(_, v)| v.to_string())
            .unwrap();
        let page = b.get(&callback).await;
        (page.status, page.body, code)
    })
}

/// A full `plumb login --sso` (or relogin): its output, after checking the URL it printed.
fn sso_login(s: &Stack, args: &[&str]) -> String {
    let port = free_port();
    let port_text = port.to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--sso-launch-browser=false", "--sso-port", &port_text]);
    let p = pending(s, &all);
    assert!(
        p.url
            .starts_with(&format!("http://127.0.0.1:{}/dex/auth?", s.dex_port)),
        "{}",
        p.url
    );
    for part in [
        "client_id=plumb-cli",
        "code_challenge_method=S256",
        "code_challenge=",
        "state=",
        "nonce=",
        "offline_access",
        &format!("redirect_uri=http%3A%2F%2Flocalhost%3A{port}%2Fauth%2Fcallback"),
    ] {
        assert!(p.url.contains(part), "{part} in {}", p.url);
    }
    let (status, page, code) = browse(s, &p.url, port);
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("You can close this window"), "{page}");
    let (exit, out) = p.finish();
    assert_eq!(exit, Some(0), "{out}");
    assert!(!out.contains(&code), "the code is never printed: {out}");
    out
}

/// No token of the config, and nothing shaped like a JWT, in `out`.
fn no_tokens(s: &Stack, out: &str) {
    let (id, refresh) = s.tokens();
    for secret in [id.as_str(), refresh.as_str()]
        .into_iter()
        .filter(|t| !t.is_empty())
    {
        assert!(!out.contains(secret), "a token in the output: {out}");
    }
    assert!(!out.contains("eyJ"), "a JWT in the output: {out}");
}

fn claim(token: &str, name: &str) -> Value {
    use base64::Engine;
    let part = token.split('.').nth(1).unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .unwrap();
    serde_json::from_slice::<Value>(&bytes).unwrap()[name].clone()
}

/// Until the stored ID token's `exp` has passed by the wall clock.
fn wait_until_expired(token: &str) {
    let exp = claim(token, "exp").as_i64().unwrap();
    loop {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        if now > exp {
            return;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn proj_list(s: &Stack) -> Output {
    s.run(&["proj", "list", "-o", "name"])
}

#[test]
fn sso_login_refresh_and_relogin_through_dex() {
    let s = start("sso-cli");
    let server = s.server();
    let mut outputs = String::new();

    let out = sso_login(&s, &["login", &server, "--sso", "--insecure"]);
    assert!(
        out.contains("'admin@example.com' logged in successfully"),
        "{out}"
    );
    assert!(
        out.contains(&format!("Context '{server}' updated")),
        "{out}"
    );
    outputs.push_str(&out);
    let (id, refresh) = s.tokens();
    assert!(
        !refresh.is_empty(),
        "Dex gave a refresh token (offline_access)"
    );
    assert_eq!(claim(&id, "aud"), "plumb-cli");
    assert_eq!(claim(&id, "email"), "admin@example.com");
    let listed = proj_list(&s);
    assert_eq!(listed.status.code(), Some(0), "{}", text(&listed.stderr));
    assert_eq!(text(&listed.stdout), "default\n");
    outputs.push_str(&crate::server_cli::all(&listed));

    // Expired: renewed with the refresh token, no new login.
    let (before, _) = s.tokens();
    wait_until_expired(&before);
    let listed = proj_list(&s);
    assert_eq!(
        listed.status.code(),
        Some(0),
        "{}\nDex:\n{}",
        text(&listed.stderr),
        s.dex.log()
    );
    assert_eq!(text(&listed.stdout), "default\n");
    outputs.push_str(&crate::server_cli::all(&listed));
    let (renewed, _) = s.tokens();
    assert_ne!(renewed, before, "the ID token was renewed");
    assert!(
        claim(&renewed, "exp").as_i64() > claim(&before, "exp").as_i64(),
        "a later expiry"
    );
    assert_eq!(claim(&renewed, "sub"), claim(&before, "sub"));
    no_tokens(&s, &outputs);

    // A refresh token the provider does not know: the command says to log in again.
    let path = s.home.path().join(".config/plumb/config");
    let cfg = std::fs::read_to_string(&path).unwrap();
    let (_, good_refresh) = s.tokens();
    std::fs::write(&path, cfg.replace(&good_refresh, "not-a-refresh-token")).unwrap();
    wait_until_expired(&renewed);
    let refused = proj_list(&s);
    assert_eq!(
        refused.status.code(),
        Some(2),
        "{}",
        crate::server_cli::all(&refused)
    );
    let msg = text(&refused.stderr);
    assert!(msg.contains("could not be renewed"), "{msg}");
    assert!(msg.contains("run `plumb relogin`"), "{msg}");
    assert!(!msg.contains("not-a-refresh-token"), "{msg}");
    outputs.push_str(&crate::server_cli::all(&refused));

    // `plumb relogin`: SSO again, as the context's token came from the provider.
    let out = sso_login(&s, &["relogin"]);
    assert!(out.contains("Reinitiating SSO login"), "{out}");
    assert!(
        out.contains(&format!("Context '{server}' updated")),
        "{out}"
    );
    outputs.push_str(&out);
    let (fresh, fresh_refresh) = s.tokens();
    assert!(!fresh_refresh.is_empty() && fresh_refresh != "not-a-refresh-token");
    assert_ne!(fresh, renewed);
    let listed = proj_list(&s);
    assert_eq!(listed.status.code(), Some(0), "{}", text(&listed.stderr));
    outputs.push_str(&crate::server_cli::all(&listed));
    no_tokens(&s, &outputs);

    // A password context relogs in with its password, and keeps no refresh token.
    let password = initial_admin_password(env(), s.ns.name());
    let out = login_admin(s.home.path(), &server, &password);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let again = s.run(&["relogin", "--password", &password]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert!(
        text(&again.stdout).contains("Relogging in as 'admin'"),
        "{}",
        text(&again.stdout)
    );
    let (token, refresh) = s.tokens();
    assert_eq!(claim(&token, "iss"), "argocd");
    assert!(refresh.is_empty());
    let wrong = s.run(&["relogin", "--password", "wrong"]);
    assert_eq!(
        wrong.status.code(),
        Some(2),
        "{}",
        crate::server_cli::all(&wrong)
    );
}

#[test]
fn sso_callbacks_with_a_wrong_state_or_the_providers_error_are_refused() {
    let s = start("sso-cli-bad");
    let server = s.server();
    let callback = |query: &str, port: u16| -> (u16, String) {
        s.rt.block_on(async {
            let r = reqwest::get(format!("http://localhost:{port}/auth/callback?{query}"))
                .await
                .unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        })
    };
    for (query, needle) in [
        (
            "code=stolen-code&state=not-this-login",
            "state is not this login's",
        ),
        (
            "error=access_denied&error_description=the+user+said+no%1b%5b31m",
            "refused the login: access_denied: the user said no[31m",
        ),
        ("state=x", "state is not this login's"),
    ] {
        let port = free_port();
        let port_text = port.to_string();
        let p = pending(
            &s,
            &[
                "login",
                &server,
                "--sso",
                "--insecure",
                "--sso-launch-browser=false",
                "--sso-port",
                &port_text,
            ],
        );
        let (status, page) = callback(query, port);
        assert_eq!(status, 400, "{query}: {page}");
        assert!(page.contains("Login failed"), "{page}");
        let (exit, out) = p.finish();
        assert_eq!(exit, Some(2), "{query}: {out}");
        assert!(out.contains(needle), "{query}: {out}");
        assert!(!out.contains("stolen-code"), "{out}");
        assert!(!out.contains('\u{1b}'), "no terminal escapes: {out:?}");
        assert!(
            !s.home.path().join(".config/plumb/config").exists(),
            "nothing stored"
        );
    }
    // A port already taken is named.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = s.run(&[
        "login",
        &server,
        "--sso",
        "--insecure",
        "--sso-launch-browser=false",
        "--sso-port",
        &port,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--sso-port"),
        "{}",
        text(&out.stderr)
    );
    // Without SSO configured, `--sso` says so.
    kubectl_apply(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm", "namespace": s.ns.name(),
                     "labels": {"app.kubernetes.io/part-of": "argocd"}},
        "data": {"url": format!("https://{server}")}}));
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = s.run(&[
            "login",
            &server,
            "--sso",
            "--insecure",
            "--sso-launch-browser=false",
        ]);
        let err = text(&out.stderr);
        if err.contains("is not configured with SSO") {
            assert_eq!(out.status.code(), Some(2));
            break;
        }
        assert!(Instant::now() < deadline, "{err}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// The scripted browser on Dex's device page: the code (in the printed URL) confirmed, Dex's
/// password page, and its device callback; that page's (status, body).
fn browse_device(s: &Stack, url: &str) -> (u16, String) {
    s.rt.block_on(async {
        let mut b = Browser::new(&format!("http://127.0.0.1:{}", s.dex_port), None);
        let page = b.get(url).await;
        assert_eq!(page.status, 200, "{url}: {}", page.body);
        let action = attr_containing(&page.body, "action", "verify_code").expect("the code form");
        let code = url
            .split_once("user_code=")
            .map(|(_, c)| c)
            .expect("user_code");
        let req = b
            .http
            .post(b.resolve_from(url, &action))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form(&[("user_code", code)]));
        let confirmed = b.send(req).await;
        let to_login = b.resolve_from(url, &confirmed.location.expect("to Dex's login"));
        let stop = format!("http://127.0.0.1:{}/dex/device/callback", s.dex_port);
        let callback = b.follow_to(to_login, &stop, "local", LOCAL_USER).await;
        let page = b.get(&callback).await;
        (page.status, page.body)
    })
}

#[test]
fn sso_device_code_login_through_dex() {
    // Dex's device page sends the browser on with `redirect_uri=/dex/device/callback` (its
    // issuer's path), which Dex itself accepts for a public client only when the client lists
    // it: at the pinned commit an issuer with a path needs this registration.
    let s = start_with_cli("sso-device", "plumb-device");
    let server = s.server();
    let args = ["login", &server, "--sso", "--sso-device-code", "--insecure"];
    let p = pending(&s, &args);
    let prefix = format!("http://127.0.0.1:{}/dex/device?user_code=", s.dex_port);
    assert!(p.url.starts_with(&prefix), "{}", p.url);
    let code = p.url.trim_start_matches(&prefix).to_string();
    assert!(
        p.printed.contains(&format!(
            "enter the code {code} at http://127.0.0.1:{}/dex/device",
            s.dex_port
        )),
        "{}",
        p.printed
    );
    let (status, page) = browse_device(&s, &p.url);
    assert_eq!(status, 200, "{page}");
    let (exit, out) = p.finish();
    assert_eq!(exit, Some(0), "{out}\nDex:\n{}", s.dex.log());
    assert!(out.contains("Authentication successful"), "{out}");
    assert!(
        out.contains("'admin@example.com' logged in successfully"),
        "{out}"
    );
    no_tokens(&s, &out);
    let (id, refresh) = s.tokens();
    assert_eq!(claim(&id, "aud"), "plumb-device");
    assert!(!refresh.is_empty(), "offline_access gave a refresh token");
    let listed = proj_list(&s);
    assert_eq!(listed.status.code(), Some(0), "{}", text(&listed.stderr));
    assert_eq!(text(&listed.stdout), "default\n");

    // Nobody enters the code: the login ends when it expires, saying so, and nothing changes.
    let p = pending(&s, &args);
    let (exit, out) = p.finish();
    assert_ne!(exit, Some(0), "{out}");
    assert!(out.contains("expired_token"), "{out}");
    assert!(out.contains("run the command again"), "{out}");
    assert_eq!(s.tokens(), (id, refresh), "the stored tokens are kept");

    // Without --sso the flag is refused.
    let out = s.run(&["login", &server, "--sso-device-code", "--insecure"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("--sso-device-code"),
        "{}",
        text(&out.stderr)
    );
}

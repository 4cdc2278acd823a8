//! The real Dex (`scripts/dex build`) on loopback, and a scripted browser that goes through
//! its login pages: what the single sign-on tests of plumb-server (server logins) and of the
//! `plumb` CLI (`plumb login --sso`) share.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// bcrypt of "password" (Dex's example user).
pub const PASSWORD_HASH: &str = "$2a$10$2b2cU8CPhOTaGrs1HRQuAueS7JTT5ZHsHSzYiFPm1leZck7Mc8T4W";
/// The example user's ID in Dex's password database.
pub const LOCAL_USER_ID: &str = "08a8684b-db88-4b73-90a9-3cd1661f5466";
/// The example user's login.
pub const LOCAL_USER: (&str, &str) = ("admin@example.com", "password");

/// The dex binary: `PLUMB_DEX`, else what `scripts/dex bin` prints.
pub fn dex_binary() -> PathBuf {
    if let Some(p) = std::env::var_os("PLUMB_DEX") {
        return PathBuf::from(p);
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/dex");
    let out = Command::new("bash")
        .arg(&script)
        .arg("bin")
        .output()
        .expect("run scripts/dex bin");
    assert!(
        out.status.success(),
        "Dex is not built: run scripts/dex build ({})",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// A free loopback port (for Dex, whose issuer must be known before it starts).
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// A running Dex, stopped on drop.
pub struct Dex {
    child: Child,
    dir: tempfile::TempDir,
}

impl Drop for Dex {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Dex {
    /// Dex with the configuration `yaml`, once `discovery` (its issuer's
    /// `/.well-known/openid-configuration`) answers.
    pub async fn start(yaml: &str, discovery: &str) -> Dex {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("dex.yaml");
        std::fs::write(&path, yaml).expect("write dex config");
        let child = spawn(dir.path(), &path);
        let mut dex = Dex { child, dir };
        let start = Instant::now();
        let mut restarts = 0;
        while start.elapsed() < Duration::from_secs(60) {
            if reqwest::get(discovery)
                .await
                .is_ok_and(|r| r.status() == 200)
            {
                return dex;
            }
            // Dex's kubernetes storage fails its first start while the API server still
            // initializes the CRDs it has just created ("storage is (re)initializing").
            if dex.child.try_wait().ok().flatten().is_some() && restarts < 5 {
                restarts += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
                dex.child = spawn(dex.dir.path(), &path);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        panic!("Dex did not answer at {discovery}: {}", dex.log());
    }

    /// What Dex logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("dex.log")).unwrap_or_default()
    }

    /// The directory Dex's configuration and log are in.
    pub fn dir(&self) -> &std::path::Path {
        self.dir.path()
    }
}

/// `dex serve CONFIG`, logging to `dir`/dex.log.
fn spawn(dir: &std::path::Path, config: &std::path::Path) -> Child {
    let log = std::fs::File::create(dir.join("dex.log")).expect("log");
    Command::new(dex_binary())
        .arg("serve")
        .arg(config)
        .stdout(log.try_clone().expect("log"))
        .stderr(log)
        .stdin(Stdio::null())
        .spawn()
        .expect("start dex")
}

/// A browser: no redirects followed, cookies kept (one jar for every site it visits).
pub struct Browser {
    pub http: reqwest::Client,
    base: url::Url,
    pub cookies: BTreeMap<String, String>,
}

/// One answer.
pub struct Page {
    pub status: u16,
    pub location: Option<String>,
    pub body: String,
}

impl Browser {
    /// A browser whose relative links start at `base`, trusting `ca_pem` only when given.
    pub fn new(base: &str, ca_pem: Option<&str>) -> Self {
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(60));
        if let Some(pem) = ca_pem {
            builder = builder
                .tls_certs_only([reqwest::Certificate::from_pem(pem.as_bytes()).expect("cert")]);
        }
        Self {
            http: builder.build().expect("client"),
            base: url::Url::parse(base).expect("base"),
            cookies: BTreeMap::new(),
        }
    }

    /// `href` (as Go's html/template escaped it) resolved against `from`, else the base.
    pub fn resolve_from(&self, from: &str, href: &str) -> String {
        let from = url::Url::parse(from).unwrap_or_else(|_| self.base.clone());
        from.join(&unescape(href)).expect("url").to_string()
    }

    pub fn resolve(&self, href: &str) -> String {
        self.base.join(&unescape(href)).expect("url").to_string()
    }

    pub async fn send(&mut self, req: reqwest::RequestBuilder) -> Page {
        let jar: Vec<String> = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let req = if jar.is_empty() {
            req
        } else {
            req.header("cookie", jar.join("; "))
        };
        let resp = req.send().await.expect("request");
        for c in resp.headers().get_all("set-cookie") {
            let c = c.to_str().expect("ascii");
            let (pair, attrs) = c.split_once(';').unwrap_or((c, ""));
            let (k, v) = pair.split_once('=').expect("cookie");
            if attrs.contains("Max-Age=0") || v.is_empty() {
                self.cookies.remove(k);
            } else {
                self.cookies.insert(k.to_string(), v.to_string());
            }
        }
        let status = resp.status().as_u16();
        let location = resp
            .headers()
            .get("location")
            .map(|l| l.to_str().expect("ascii").to_string());
        let body = resp.text().await.expect("body");
        Page {
            status,
            location,
            body,
        }
    }

    pub async fn get(&mut self, url: &str) -> Page {
        let req = self.http.get(url);
        self.send(req).await
    }

    /// From a URL to the first redirect to `stop`, through Dex's pages: the connector
    /// `connector`'s link, and its password form with `login`.
    pub async fn follow_to(
        &mut self,
        mut next: String,
        stop: &str,
        connector: &str,
        login: (&str, &str),
    ) -> String {
        for _ in 0..20 {
            if next.starts_with(stop) {
                return next;
            }
            let page = self.get(&next).await;
            if let Some(loc) = page.location {
                next = self.resolve_from(&next, &loc);
                continue;
            }
            assert_eq!(page.status, 200, "{next}: {}", page.body);
            let link = format!("/auth/{connector}");
            if let Some(href) = attr_containing(&page.body, "href", &link) {
                next = self.resolve_from(&next, &href);
            } else if page.body.contains("name=\"password\"") {
                let action = attr_containing(&page.body, "action", "/auth/").expect("form action");
                let req = self
                    .http
                    .post(self.resolve_from(&next, &action))
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body(form(&[("login", login.0), ("password", login.1)]));
                let posted = self.send(req).await;
                let loc = posted
                    .location
                    .unwrap_or_else(|| panic!("login refused: {}", posted.body));
                next = self.resolve_from(&next, &loc);
            } else {
                panic!("unexpected Dex page at {next}:\n{}", page.body);
            }
        }
        panic!("no redirect to {stop}");
    }
}

/// An attribute value as Go's html/template escaped it (`&amp;`, `&#43;` for `+`, ...).
pub fn unescape(v: &str) -> String {
    v.replace("&#43;", "+")
        .replace("&#39;", "'")
        .replace("&#34;", "\"")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The value of the first `name="..."` attribute containing `needle`.
pub fn attr_containing(html: &str, name: &str, needle: &str) -> Option<String> {
    let key = format!("{name}=\"");
    html.match_indices(&key).find_map(|(i, _)| {
        let rest = &html[i + key.len()..];
        let value = &rest[..rest.find('"')?];
        value.contains(needle).then(|| value.to_string())
    })
}

/// An `application/x-www-form-urlencoded` body.
pub fn form(pairs: &[(&str, &str)]) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// Percent-encodes a query value.
pub fn enc(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

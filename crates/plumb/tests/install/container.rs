//! One container of a rendered Deployment run under runc the way a kubelet would run its Pod:
//! the image's files as the read-only root, the user, command, arguments, environment, security
//! context, emptyDir volumes and memory limit of the Deployment, and the ServiceAccount token
//! mounted where every Pod has it with `KUBERNETES_SERVICE_HOST`/`PORT` set, so Plumb finds its
//! in-cluster configuration and nothing else.
//!
//! One difference: the container shares the test's network namespace, because the API server
//! listens on 127.0.0.1 only (and the tests run in a namespace holding only loopback). A Pod has
//! its own, so its fixed ports cannot clash; here each port the Deployment declares is moved to
//! a free loopback port by rewriting the one flag that sets it ([`LISTEN_FLAGS`]), and the probes
//! follow the port names.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::image::Image;

/// The flag that sets the address of each port a Deployment declares (Deployment, port name,
/// flag). A port missing here fails the test: it would listen on a fixed port of the host.
const LISTEN_FLAGS: &[(&str, &str, &str)] = &[
    ("plumb-controller", "metrics", "--metrics-addr"),
    ("plumb-server", "server", "--listen"),
    ("plumb-server", "https", "--listen"),
    ("plumb-server", "http", "--listen"),
    ("plumb-server", "metrics", "--metrics-addr"),
];

/// Where the kubelet mounts a Pod's ServiceAccount token, CA and namespace.
const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// How a container reaches the API server and proves who it is.
pub struct Credentials<'a> {
    /// The Pod's namespace.
    pub namespace: &'a str,
    /// The API server's port on 127.0.0.1.
    pub api_port: u16,
    /// The CA certificate (PEM) of the API server's serving certificate.
    pub ca_pem: &'a str,
    /// A ServiceAccount token from the TokenRequest API.
    pub token: String,
}

/// A running container, killed and deleted when dropped.
pub struct Container {
    id: String,
    /// The Deployment's name.
    pub name: String,
    /// Host port of each declared container port, by port name.
    pub ports: BTreeMap<String, u16>,
    container: Value,
    grace: Duration,
    log: PathBuf,
    _bundle: tempfile::TempDir,
}

impl Container {
    /// Starts the one container of `workload` (a rendered Deployment) from `image`.
    pub fn start(image: &Image, workload: &Value, creds: Credentials<'_>) -> Self {
        let name = workload["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let pod = &workload["spec"]["template"]["spec"];
        let containers = pod["containers"].as_array().cloned().unwrap_or_default();
        assert_eq!(
            containers.len(),
            1,
            "{name}: this test runs Deployments of one container, the Pod has {}",
            containers.len()
        );
        let container = containers[0].clone();
        let ports = free_ports(&container);
        let bundle = tempfile::Builder::new()
            .prefix("plumb-runc-")
            .tempdir()
            .expect("temporary directory");
        let mut config = base_config(bundle.path());
        let pod_name = format!("{name}-runc");
        let process = process(image, pod, &container, &name, &pod_name, &ports, &creds);
        config["process"] = process;
        config["hostname"] = json!(pod_name);
        config["root"] = json!({"path": image.rootfs, "readonly": read_only_root(&container)});
        config["mounts"] = json!(mounts(
            &config,
            pod,
            &container,
            bundle.path(),
            &creds,
            &name
        ));
        linux(&mut config, &container, pod);
        std::fs::write(bundle.path().join("config.json"), config.to_string())
            .expect("writing config.json");
        let id = format!("{}-{name}", creds.namespace);
        let log = bundle.path().join("container.log");
        run(&id, bundle.path(), &log);
        let grace = pod["terminationGracePeriodSeconds"].as_u64().unwrap_or(30);
        Self {
            id,
            name,
            ports,
            container,
            grace: Duration::from_secs(grace),
            log,
            _bundle: bundle,
        }
    }

    /// The host port of the address `flag` sets (`--listen`, `--metrics-addr`).
    pub fn flag_port(&self, flag: &str) -> u16 {
        LISTEN_FLAGS
            .iter()
            .filter(|(d, _, f)| *d == self.name && *f == flag)
            .find_map(|(_, port, _)| self.ports.get(*port).copied())
            .unwrap_or_else(|| panic!("{} declares no port that {flag} sets", self.name))
    }

    /// Everything the container printed so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// What the container printed so far (its last 60 lines).
    pub fn log_tail(&self) -> String {
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(60)..].join("\n")
    }

    /// runc's status of the container (`running`, `stopped`, ...).
    pub fn status(&self) -> String {
        let out = Command::new("runc")
            .args(["state", &self.id])
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("running runc state: {e}"));
        let state: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        state["status"].as_str().unwrap_or("gone").to_owned()
    }

    /// Panics with the log when the container no longer runs.
    pub fn assert_running(&self) {
        let status = self.status();
        assert_eq!(
            status,
            "running",
            "container {} is {status}:\n{}",
            self.name,
            self.log_tail()
        );
    }

    /// Waits until every HTTP probe of the Deployment (startup, liveness, readiness) answers
    /// 200, as the kubelet checks them; panics after `deadline` with the last answer and the log.
    pub fn wait_probes(&self, deadline: Duration) {
        for kind in ["startupProbe", "livenessProbe", "readinessProbe"] {
            let probe = &self.container[kind];
            if probe.is_null() {
                continue;
            }
            let get = &probe["httpGet"];
            assert!(
                !get.is_null(),
                "{}: {kind} is not an httpGet probe, which this test cannot run: {probe}",
                self.name
            );
            let url = self.probe_url(get);
            self.wait_http(&url, deadline, &format!("{kind} {url}"));
        }
    }

    /// Waits until `url` (on one of the container's ports) answers 200.
    pub fn wait_http(&self, url: &str, deadline: Duration, what: &str) {
        let end = Instant::now() + deadline;
        loop {
            let (code, body) = curl(url);
            if code == "200" {
                return;
            }
            self.assert_running();
            assert!(
                Instant::now() < end,
                "{}: {what} did not answer 200 within {deadline:?} (last: {code} {body})\n{}",
                self.name,
                self.log_tail()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// `scheme://127.0.0.1:<host port>/path` of an httpGet probe.
    pub fn probe_url(&self, get: &Value) -> String {
        let port = match &get["port"] {
            Value::String(name) => name.clone(),
            Value::Number(n) => self.container["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|p| p["containerPort"].as_u64() == n.as_u64())
                .and_then(|p| p["name"].as_str())
                .unwrap_or_else(|| panic!("{}: probe port {n} is not declared", self.name))
                .to_owned(),
            other => panic!("{}: probe port {other}", self.name),
        };
        let host_port = self
            .ports
            .get(&port)
            .unwrap_or_else(|| panic!("{}: probe port {port:?} is not a declared port", self.name));
        let scheme = get["scheme"]
            .as_str()
            .unwrap_or("HTTP")
            .to_ascii_lowercase();
        let path = get["path"].as_str().unwrap_or("/");
        format!("{scheme}://127.0.0.1:{host_port}{path}")
    }

    /// Stops the container the way the kubelet does (SIGTERM) and waits up to the Pod's
    /// termination grace period for it to exit; panics when it does not.
    pub fn stop_gracefully(&self) {
        let out = Command::new("runc")
            .args(["kill", &self.id, "TERM"])
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("running runc kill: {e}"));
        assert!(
            out.status.success(),
            "runc kill {} TERM: {}",
            self.id,
            String::from_utf8_lossy(&out.stderr)
        );
        let end = Instant::now() + self.grace;
        while self.status() == "running" {
            assert!(
                Instant::now() < end,
                "{} did not stop within its termination grace period ({:?}) after SIGTERM \
                 (the kubelet would kill it)\n{}",
                self.name,
                self.grace,
                self.log_tail()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("---- container {} ----\n{}", self.name, self.log_tail());
        }
        for args in [
            vec!["kill", &self.id, "KILL"],
            vec!["delete", "--force", &self.id],
        ] {
            let _ = Command::new("runc")
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// `curl -k` (the kubelet does not verify a probe's certificate either): status code and body.
fn curl(url: &str) -> (String, String) {
    let out = Command::new("curl")
        .args(["-sk", "--max-time", "5", "-w", "\n%{http_code}", url])
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running curl: {e}"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    (code.to_owned(), body.chars().take(300).collect())
}

/// A free loopback port for each declared container port, by name.
fn free_ports(container: &Value) -> BTreeMap<String, u16> {
    let mut out = BTreeMap::new();
    for p in container["ports"].as_array().into_iter().flatten() {
        let name = p["name"]
            .as_str()
            .unwrap_or_else(|| panic!("a container port without a name: {p}"));
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        out.insert(name.to_owned(), port);
    }
    out
}

/// runc's own default configuration (`runc spec`), the starting point every field below edits.
fn base_config(bundle: &Path) -> Value {
    let out = Command::new("runc")
        .args(["spec", "--bundle"])
        .arg(bundle)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running runc (Debian package runc): {e}"));
    assert!(
        out.status.success(),
        "runc spec: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = bundle.join("config.json");
    let text = std::fs::read_to_string(&path).expect("runc spec's config.json");
    serde_json::from_str(&text).expect("runc spec's config.json is JSON")
}

fn read_only_root(container: &Value) -> bool {
    container["securityContext"]["readOnlyRootFilesystem"]
        .as_bool()
        .unwrap_or(false)
}

/// The security context field `key`, the container's over the Pod's.
fn security<'a>(pod: &'a Value, container: &'a Value, key: &str) -> &'a Value {
    let c = &container["securityContext"][key];
    if c.is_null() {
        &pod["securityContext"][key]
    } else {
        c
    }
}

/// The process: command line, user, environment, capabilities.
fn process(
    image: &Image,
    pod: &Value,
    container: &Value,
    name: &str,
    pod_name: &str,
    ports: &BTreeMap<String, u16>,
    creds: &Credentials<'_>,
) -> Value {
    let args = command_line(image, container, name, ports);
    let image_user = image.user.clone().unwrap_or_else(|| "0".into());
    let (image_uid, image_gid, home) = image.passwd_entry(&image_user);
    let uid = security(pod, container, "runAsUser")
        .as_u64()
        .map_or(image_uid, |u| u32::try_from(u).expect("runAsUser fits u32"));
    let gid = security(pod, container, "runAsGroup")
        .as_u64()
        .map_or(image_gid, |g| {
            u32::try_from(g).expect("runAsGroup fits u32")
        });
    if security(pod, container, "runAsNonRoot") == true {
        assert_ne!(
            uid, 0,
            "{name}: runAsNonRoot with user 0: the kubelet refuses to start it"
        );
    }
    // containerd sets HOME from the image's /etc/passwd for the uid, else "/".
    let home = if uid == image_uid { home } else { None };
    let mut env = Env::default();
    for kv in &image.env {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        env.set(k, v);
    }
    env.set("HOSTNAME", pod_name);
    env.set("HOME", home.as_deref().unwrap_or("/"));
    env.set("KUBERNETES_SERVICE_HOST", "127.0.0.1");
    env.set("KUBERNETES_SERVICE_PORT", &creds.api_port.to_string());
    env.set("KUBERNETES_SERVICE_PORT_HTTPS", &creds.api_port.to_string());
    container_env(&mut env, pod, container, name, pod_name, creds.namespace);
    let no_new_privs = container["securityContext"]["allowPrivilegeEscalation"] == false;
    let caps = capabilities(container);
    let groups: Vec<u64> = security(pod, container, "fsGroup")
        .as_u64()
        .into_iter()
        .collect();
    json!({
        "terminal": false,
        "user": {"uid": uid, "gid": gid, "additionalGids": groups},
        "args": args,
        "env": env.0.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
        "cwd": container["workingDir"].as_str().or(image.workdir.as_deref()).unwrap_or("/"),
        "capabilities": {"bounding": caps, "effective": caps, "permitted": caps, "ambient": []},
        "noNewPrivileges": no_new_privs,
    })
}

/// Environment variables in order, a later `set` of a name replacing the earlier value.
#[derive(Default)]
struct Env(Vec<(String, String)>);

impl Env {
    fn set(&mut self, k: &str, v: &str) {
        match self.0.iter_mut().find(|(name, _)| name == k) {
            Some(e) => e.1 = v.to_owned(),
            None => self.0.push((k.to_owned(), v.to_owned())),
        }
    }
}

/// The container's `env`, downward API references resolved as the kubelet resolves them.
fn container_env(
    env: &mut Env,
    pod: &Value,
    container: &Value,
    name: &str,
    pod_name: &str,
    namespace: &str,
) {
    assert!(
        container["envFrom"].is_null(),
        "{name}: envFrom is not supported by this test"
    );
    for e in container["env"].as_array().into_iter().flatten() {
        let key = e["name"].as_str().unwrap_or_default();
        if let Some(v) = e["value"].as_str() {
            env.set(key, v);
            continue;
        }
        let field = e["valueFrom"]["fieldRef"]["fieldPath"].as_str();
        let value = match field {
            Some("metadata.namespace") => namespace.to_owned(),
            Some("metadata.name") => pod_name.to_owned(),
            Some("spec.serviceAccountName") => pod["serviceAccountName"]
                .as_str()
                .unwrap_or("default")
                .to_owned(),
            Some("spec.nodeName") => "runc".to_owned(),
            Some("status.podIP" | "status.hostIP") => "127.0.0.1".to_owned(),
            _ => panic!(
                "{name}: env {key} comes from {}, which this test cannot resolve",
                e
            ),
        };
        env.set(key, &value);
    }
}

/// Capabilities left after the container's `drop` and `add` (runc's default set otherwise, as
/// the runtime's default would be).
fn capabilities(container: &Value) -> Vec<String> {
    let caps = &container["securityContext"]["capabilities"];
    let names = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c.as_str())
            .map(|c| format!("CAP_{}", c.trim_start_matches("CAP_")))
            .collect()
    };
    let dropped = names(&caps["drop"]);
    let mut set: Vec<String> = if dropped.iter().any(|c| c == "CAP_ALL") {
        Vec::new()
    } else {
        ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]
            .into_iter()
            .map(str::to_owned)
            .filter(|c| !dropped.contains(c))
            .collect()
    };
    set.extend(names(&caps["add"]));
    set
}

/// The command line as the kubelet builds it from `command`/`args` and the image's
/// `Entrypoint`/`Cmd`, with every listening address moved to its free loopback port.
fn command_line(
    image: &Image,
    container: &Value,
    name: &str,
    ports: &BTreeMap<String, u16>,
) -> Vec<String> {
    let strings = |v: &Value| -> Option<Vec<String>> {
        v.as_array().map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
    };
    let mut argv = match (strings(&container["command"]), strings(&container["args"])) {
        (Some(cmd), args) => [cmd, args.unwrap_or_default()].concat(),
        (None, Some(args)) => [image.entrypoint.clone(), args].concat(),
        (None, None) => [image.entrypoint.clone(), image.cmd.clone()].concat(),
    };
    assert!(!argv.is_empty(), "{name}: no command (image or Deployment)");
    for (port_name, host_port) in ports {
        let flag = LISTEN_FLAGS
            .iter()
            .find(|(d, p, _)| *d == name && p == port_name)
            .map(|(_, _, f)| *f)
            .unwrap_or_else(|| {
                panic!(
                    "{name} declares port {port_name:?}, and this test does not know the flag \
                     that sets its address (LISTEN_FLAGS in tests/install/container.rs)"
                )
            });
        let mut i = 0;
        while i < argv.len() {
            if argv[i] == flag {
                argv.drain(i..(i + 2).min(argv.len()));
            } else if argv[i].starts_with(&format!("{flag}=")) {
                argv.remove(i);
            } else {
                i += 1;
            }
        }
        argv.push(flag.to_owned());
        argv.push(format!("127.0.0.1:{host_port}"));
    }
    argv
}

/// runc's default mounts, each emptyDir volume mount, and the ServiceAccount files.
fn mounts(
    config: &Value,
    pod: &Value,
    container: &Value,
    bundle: &Path,
    creds: &Credentials<'_>,
    name: &str,
) -> Vec<Value> {
    let mut mounts = config["mounts"].as_array().cloned().unwrap_or_default();
    let volumes = pod["volumes"].as_array().cloned().unwrap_or_default();
    for m in container["volumeMounts"].as_array().into_iter().flatten() {
        let vol_name = m["name"].as_str().unwrap_or_default();
        let vol = volumes
            .iter()
            .find(|v| v["name"] == vol_name)
            .unwrap_or_else(|| panic!("{name}: volumeMount {vol_name} names no volume"));
        assert!(
            !vol["emptyDir"].is_null(),
            "{name}: volume {vol_name} is not an emptyDir, which this test cannot provide: {vol}"
        );
        // An emptyDir is a directory of the node's, mode 0777, bind-mounted (a tmpfs would not
        // do: runc gives a tmpfs the mode of the directory it covers, 0755 root in the image).
        let dir = bundle.join("volumes").join(vol_name);
        std::fs::create_dir_all(&dir).expect("emptyDir directory");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let mut options = vec!["rbind", "nosuid", "nodev"];
        if m["readOnly"] == true {
            options.push("ro");
        }
        mounts.push(
            json!({"destination": m["mountPath"], "type": "bind", "source": dir,
                           "options": options}),
        );
    }
    if pod["automountServiceAccountToken"] != false {
        let sa = bundle.join("serviceaccount");
        std::fs::create_dir_all(&sa).expect("serviceaccount directory");
        for (file, content) in [
            ("token", creds.token.as_str()),
            ("ca.crt", creds.ca_pem),
            ("namespace", creds.namespace),
        ] {
            let path = sa.join(file);
            std::fs::write(&path, content).expect("writing a serviceaccount file");
            // The kubelet's projected volume mode (0644): readable by the container's user.
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        }
        mounts.push(
            json!({"destination": SERVICE_ACCOUNT_DIR, "type": "bind", "source": sa,
                           "options": ["rbind", "ro", "nosuid", "nodev", "noexec"]}),
        );
    }
    mounts
}

/// Namespaces (the host's network), the memory limit, and the seccomp profile.
fn linux(config: &mut Value, container: &Value, pod: &Value) {
    let linux = &mut config["linux"];
    if let Some(ns) = linux["namespaces"].as_array_mut() {
        ns.retain(|n| n["type"] != "network");
    }
    if let Some(limit) = container["resources"]["limits"]["memory"].as_str() {
        linux["resources"]["memory"] = json!({"limit": quantity(limit)});
    }
    let seccomp = security(pod, container, "seccompProfile");
    if seccomp["type"] != "Unconfined" {
        linux["seccomp"] = crate::seccomp::runtime_default();
    }
}

/// A memory quantity (`512Mi`, `2Gi`, `1G`, bytes) in bytes.
fn quantity(q: &str) -> u64 {
    let units: [(&str, u64); 6] = [
        ("Ki", 1 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("k", 1000),
        ("M", 1_000_000),
        ("G", 1_000_000_000),
    ];
    let (digits, factor) = units
        .iter()
        .find_map(|(suffix, f)| q.strip_suffix(suffix).map(|d| (d, *f)))
        .unwrap_or((q, 1));
    digits
        .parse::<u64>()
        .map(|n| n * factor)
        .unwrap_or_else(|e| panic!("memory quantity {q:?}: {e}"))
}

/// `runc run --detach`: the container's output goes to `log` (runc hands its own stdout and
/// stderr to the container).
fn run(id: &str, bundle: &Path, log: &Path) {
    // A container left by a killed run of the same namespace name cannot exist (namespaces are
    // unique), so an existing id is an error worth seeing.
    let file = std::fs::File::create(log).expect("container log");
    let status = Command::new("runc")
        .args(["run", "--detach", "--bundle"])
        .arg(bundle)
        .arg(id)
        .stdin(Stdio::null())
        .stdout(file.try_clone().expect("log handle"))
        .stderr(file)
        .status()
        .unwrap_or_else(|e| panic!("running runc run: {e}"));
    let mut msg = String::new();
    if !status.success() {
        let _ = write!(msg, "{}", std::fs::read_to_string(log).unwrap_or_default());
    }
    assert!(status.success(), "runc run {id} failed ({status}): {msg}");
}

//! What the settings pages' browser tests share: a `plumb server` with authentication in a
//! namespace of their own, and a run of one `ui/e2e` script against it that must end in PASS.

use std::path::PathBuf;
use std::time::Duration;

use plumb_testenv::TestNamespace;

use super::support::{create_default_project, env, server_config};
use super::{prerequisites, secret_value};

pub struct SettingsServer {
    ui: PathBuf,
    chromium: PathBuf,
    pub ns: TestNamespace,
    pub client: kube::Client,
    server: plumb_server::Running,
    admin_pw: String,
}

impl SettingsServer {
    pub async fn start(prefix: &str) -> Self {
        Self::start_tuned(prefix, |_| {}).await
    }

    /// [`SettingsServer::start`] with the server's configuration changed by `tune`.
    pub async fn start_tuned(
        prefix: &str,
        tune: impl FnOnce(&mut plumb_server::ServerConfig),
    ) -> Self {
        let (ui, chromium) = match prerequisites() {
            Ok(p) => p,
            Err(why) => panic!("the web UI browser test cannot run: {why}"),
        };
        let ns = env().namespace(prefix);
        let client = env().client().await;
        create_default_project(&client, ns.name()).await;
        let mut config = server_config(ns.name());
        config.disable_auth = false;
        tune(&mut config);
        let server = plumb_server::serve(client.clone(), config)
            .await
            .expect("server starts");
        let admin_pw = secret_value(
            &client,
            ns.name(),
            "argocd-initial-admin-secret",
            "password",
        )
        .await;
        Self {
            ui,
            chromium,
            ns,
            client,
            server,
            admin_pw,
        }
    }

    /// Runs `node e2e/<script>` with `vars` besides the URL, the admin password and the
    /// browser; its output (stdout, then stderr) once it printed PASS last, else the test fails
    /// with that output.
    pub async fn run(&self, script: &str, vars: &[(&str, &str)]) -> String {
        let mut cmd = tokio::process::Command::new("node");
        cmd.arg(format!("e2e/{script}"))
            .current_dir(&self.ui)
            .env(
                "PLUMB_UI_URL",
                format!("https://localhost:{}", self.server.addr.port()),
            )
            .env("PLUMB_ADMIN_PASSWORD", &self.admin_pw)
            .env("PLUMB_CHROMIUM", &self.chromium)
            .env("PLUMB_FAILURE_DIR", std::env::temp_dir())
            .envs(vars.iter().copied())
            .kill_on_drop(true);
        if let Some(dir) = std::env::var_os("PLUMB_UI_SCREENSHOTS") {
            cmd.env("PLUMB_SCREENSHOTS", dir);
        }
        // A generous bound for the whole browser session; no step is timed.
        let out = tokio::time::timeout(Duration::from_secs(600), cmd.output())
            .await
            .expect("the browser test ends within 10 minutes")
            .expect("node runs (Node 20 is required)");
        let log = String::from_utf8_lossy(&out.stdout).to_string();
        let err = String::from_utf8_lossy(&out.stderr);
        println!("{log}{err}");
        assert!(
            out.status.success() && log.lines().last() == Some("PASS"),
            "the browser test {script} failed; its output:\n{log}"
        );
        format!("{log}{err}")
    }

    /// [`SettingsServer::run`] for a script that asks for steps: on each line `STEP <name>` it
    /// prints, `on_step(name)` runs and the script is answered `done`.
    pub async fn run_interactive(
        &self,
        script: &str,
        vars: &[(&str, &str)],
        mut on_step: impl AsyncFnMut(&str),
    ) -> String {
        use std::process::Stdio;
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
        let mut cmd = tokio::process::Command::new("node");
        cmd.arg(format!("e2e/{script}"))
            .current_dir(&self.ui)
            .env("PLUMB_UI_URL", self.base())
            .env("PLUMB_ADMIN_PASSWORD", &self.admin_pw)
            .env("PLUMB_CHROMIUM", &self.chromium)
            .env("PLUMB_FAILURE_DIR", std::env::temp_dir())
            .envs(vars.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        if let Some(dir) = std::env::var_os("PLUMB_UI_SCREENSHOTS") {
            cmd.env("PLUMB_SCREENSHOTS", dir);
        }
        let mut child = cmd.spawn().expect("node runs (Node 20 is required)");
        let mut stdin = child.stdin.take().expect("stdin");
        let mut out = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut log = Vec::new();
        let session = async {
            while let Some(line) = out.next_line().await.expect("read the script's output") {
                println!("{line}");
                log.push(line.clone());
                if let Some(step) = line.strip_prefix("STEP ") {
                    on_step(step).await;
                    stdin.write_all(b"done\n").await.expect("answer the script");
                }
            }
            child.wait().await.expect("node exits")
        };
        // A generous bound for the whole browser session; no step is timed.
        let status = tokio::time::timeout(Duration::from_secs(600), session)
            .await
            .expect("the browser test ends within 10 minutes");
        assert!(
            status.success() && log.last().is_some_and(|l| l == "PASS"),
            "the browser test {script} failed (exit {status}); its output:\n{}",
            log.join("\n")
        );
        log.join("\n")
    }

    /// The server's address as the browser reaches it.
    pub fn base(&self) -> String {
        format!("https://localhost:{}", self.server.addr.port())
    }

    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}

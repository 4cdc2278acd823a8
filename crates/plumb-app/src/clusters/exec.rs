//! `execProviderConfig`: a command that prints an `ExecCredential` (client-go's exec credential
//! plugin), run with a time limit, an output limit and an environment that holds only what the
//! plugin needs: never the controller's own environment (which may hold its credentials).
//! The credential is kept until its `expirationTimestamp` (or until the API server answers 401).

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncReadExt as _;

use super::config::ExecProviderConfig;

/// How long a plugin may run, and how much it may print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecLimits {
    /// After this the plugin's whole process group is killed.
    pub timeout: Duration,
    /// Bytes of stdout read at most; more is refused.
    pub max_output: usize,
}

impl Default for ExecLimits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            max_output: 1 << 20,
        }
    }
}

/// The variables of the controller's environment a plugin gets (client-go passes all of
/// them; Plumb passes only these, plus the plugin's own `env`).
const PASSED_ENV: [&str; 3] = ["PATH", "HOME", "TMPDIR"];

/// What a plugin returned.
#[derive(Clone, PartialEq, Eq)]
pub struct ExecCredential {
    /// `status.token`.
    pub token: Option<String>,
    /// `status.clientCertificateData` (PEM).
    pub client_certificate: Option<String>,
    /// `status.clientKeyData` (PEM).
    pub client_key: Option<String>,
    /// `status.expirationTimestamp`; `None`: valid until the server refuses it.
    pub expires: Option<jiff::Timestamp>,
}

impl std::fmt::Debug for ExecCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecCredential")
            .field("token", &self.token.as_ref().map(|_| "<masked>"))
            .field("client_certificate", &self.client_certificate.is_some())
            .field("client_key", &self.client_key.as_ref().map(|_| "<masked>"))
            .field("expires", &self.expires)
            .finish()
    }
}

impl ExecCredential {
    /// Whether it may still be used at `now`.
    pub fn is_fresh(&self, now: jiff::Timestamp) -> bool {
        self.expires.is_none_or(|t| t > now)
    }
}

/// Why a plugin gave no credential. Never holds what the plugin printed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExecError {
    /// The command does not exist (client-go's text, then the `installHint`).
    #[error("exec: executable {command} not found{hint}")]
    NotFound {
        /// The command.
        command: String,
        /// "\n\n" and the install hint, or nothing.
        hint: String,
    },
    /// The command could not be started.
    #[error("exec: executable {command} could not be started: {reason}")]
    Spawn {
        /// The command.
        command: String,
        /// Why.
        reason: String,
    },
    /// It ran too long and was killed.
    #[error("exec: executable {command} did not finish within {seconds}s and was killed")]
    Timeout {
        /// The command.
        command: String,
        /// The limit.
        seconds: u64,
    },
    /// It printed more than the limit.
    #[error("exec: executable {command} printed more than {limit} bytes; refused")]
    TooLarge {
        /// The command.
        command: String,
        /// The limit in bytes.
        limit: usize,
    },
    /// It failed.
    #[error("exec: executable {command} failed with {status}")]
    Failed {
        /// The command.
        command: String,
        /// Its exit status.
        status: String,
    },
    /// What it printed is not a usable ExecCredential.
    #[error("exec: executable {command} returned an invalid ExecCredential: {reason}")]
    Invalid {
        /// The command.
        command: String,
        /// Why (never the output itself).
        reason: String,
    },
}

/// Runs the plugin once and reads its credential.
pub async fn run(
    cfg: &ExecProviderConfig,
    limits: ExecLimits,
) -> Result<ExecCredential, ExecError> {
    let out = run_bounded(cfg, limits).await?;
    parse(&cfg.command, &cfg.api_version, &out)
}

/// The command as client-go starts it, minus the controller's environment.
fn command(cfg: &ExecProviderConfig) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(&cfg.command);
    cmd.args(&cfg.args).env_clear();
    for k in PASSED_ENV {
        if let Some(v) = std::env::var_os(k) {
            cmd.env(k, v);
        }
    }
    cmd.envs(cfg.env.iter().map(|(k, v)| (k, v)));
    let info = json!({
        "apiVersion": cfg.api_version,
        "kind": "ExecCredential",
        "spec": {"interactive": false},
    });
    cmd.env("KUBERNETES_EXEC_INFO", info.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
    cmd
}

/// Kills the plugin's process group when dropped (a timeout, too much output, or the caller
/// gone), so nothing it started outlives it.
struct GroupGuard(Option<rustix::process::Pid>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

// A plugin file that was just written (an install step, a rotated helper) can still be open for
// writing in a child that another thread forked and has not yet exec'd: exec then fails with
// ETXTBSY for a moment. client-go would retry on the next request; retry here, briefly.
async fn spawn(cfg: &ExecProviderConfig) -> std::io::Result<tokio::process::Child> {
    let mut attempt = 0;
    loop {
        match command(cfg).spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && attempt < 20 => {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            other => return other,
        }
    }
}

async fn run_bounded(cfg: &ExecProviderConfig, limits: ExecLimits) -> Result<Vec<u8>, ExecError> {
    let name = cfg.command.clone();
    let mut child = spawn(cfg).await.map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ExecError::NotFound {
            command: name.clone(),
            hint: cfg
                .install_hint
                .as_ref()
                .map(|h| format!("\n\n{h}"))
                .unwrap_or_default(),
        },
        _ => ExecError::Spawn {
            command: name.clone(),
            reason: e.to_string(),
        },
    })?;
    let _guard = GroupGuard(
        child
            .id()
            .and_then(|id| rustix::process::Pid::from_raw(id as i32)),
    );
    let work = async {
        let mut out = Vec::new();
        if let Some(stdout) = child.stdout.take() {
            let cap = limits.max_output as u64 + 1;
            stdout
                .take(cap)
                .read_to_end(&mut out)
                .await
                .map_err(|e| ExecError::Spawn {
                    command: name.clone(),
                    reason: e.to_string(),
                })?;
        }
        if out.len() > limits.max_output {
            return Err(ExecError::TooLarge {
                command: name.clone(),
                limit: limits.max_output,
            });
        }
        let status = child.wait().await.map_err(|e| ExecError::Spawn {
            command: name.clone(),
            reason: e.to_string(),
        })?;
        if !status.success() {
            return Err(ExecError::Failed {
                command: name.clone(),
                status: status.to_string(),
            });
        }
        Ok(out)
    };
    match tokio::time::timeout(limits.timeout, work).await {
        Ok(r) => r,
        Err(_) => Err(ExecError::Timeout {
            command: name,
            seconds: limits.timeout.as_secs(),
        }),
    }
}

/// Reads an ExecCredential as client-go does (the version must be the one asked for).
fn parse(command: &str, api_version: &str, out: &[u8]) -> Result<ExecCredential, ExecError> {
    let invalid = |reason: String| ExecError::Invalid {
        command: command.to_string(),
        reason,
    };
    let v: Value = serde_json::from_slice(out).map_err(|e| {
        invalid(format!(
            "not JSON (line {}, column {})",
            e.line(),
            e.column()
        ))
    })?;
    let got = v.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if got != api_version {
        return Err(invalid(format!(
            "exec plugin is configured to use API version {api_version}, plugin returned version {}",
            if got.len() > 100 { "(too long)" } else { got }
        )));
    }
    let status = v
        .get("status")
        .filter(|s| s.is_object())
        .ok_or_else(|| invalid("exec plugin didn't return a status field".into()))?;
    let s = |k: &str| -> Result<Option<String>, ExecError> {
        match status.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(x)) if x.is_empty() => Ok(None),
            Some(Value::String(x)) => Ok(Some(x.clone())),
            Some(_) => Err(invalid(format!("status.{k} is not a string"))),
        }
    };
    let expires =
        match s("expirationTimestamp")? {
            None => None,
            Some(t) => Some(t.parse::<jiff::Timestamp>().map_err(|_| {
                invalid("status.expirationTimestamp is not an RFC 3339 time".into())
            })?),
        };
    let cred = ExecCredential {
        token: s("token")?,
        client_certificate: s("clientCertificateData")?,
        client_key: s("clientKeyData")?,
        expires,
    };
    let pair = cred.client_certificate.is_some() && cred.client_key.is_some();
    if cred.token.is_none() && !pair {
        return Err(invalid(
            "exec plugin didn't return a token or cert/key pair".into(),
        ));
    }
    if cred.client_certificate.is_some() != cred.client_key.is_some() {
        return Err(invalid(
            "exec plugin returned only one of clientCertificateData and clientKeyData".into(),
        ));
    }
    Ok(cred)
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1: &str = "client.authentication.k8s.io/v1";

    fn script(body: &str) -> (tempfile::TempDir, ExecProviderConfig) {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plugin.sh");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let cfg = ExecProviderConfig {
            command: path.display().to_string(),
            args: vec!["one".into()],
            env: vec![("GREETING".into(), "hi".into())],
            api_version: V1.into(),
            install_hint: None,
        };
        (dir, cfg)
    }

    fn quick() -> ExecLimits {
        ExecLimits {
            timeout: Duration::from_secs(2),
            max_output: 64 * 1024,
        }
    }

    #[tokio::test]
    async fn reads_a_token_and_passes_args_env_and_exec_info() {
        let (_d, cfg) = script(
            r#"test "$1" = one || exit 3
test "$GREETING" = hi || exit 4
case "$KUBERNETES_EXEC_INFO" in *'"interactive":false'*) ;; *) exit 5;; esac
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok","expirationTimestamp":"2099-01-01T00:00:00Z"}}'"#,
        );
        let c = run(&cfg, quick()).await.unwrap();
        assert_eq!(c.token.as_deref(), Some("tok"));
        assert!(c.is_fresh(jiff::Timestamp::now()));
        assert!(!format!("{c:?}").contains("tok\""), "{c:?}");
    }

    // The test process's environment is full of CARGO_* variables: none may reach the plugin.
    #[tokio::test]
    async fn the_controllers_environment_is_not_passed() {
        assert!(
            std::env::var_os("CARGO_PKG_NAME").is_some() || std::env::var_os("CARGO").is_some()
        );
        let (_d, cfg) = script(
            r#"for v in $(env | cut -d= -f1); do
  case "$v" in PATH|HOME|TMPDIR|GREETING|KUBERNETES_EXEC_INFO|PWD|OLDPWD|SHLVL|_) ;; *) exit 9;; esac
done
echo '{"apiVersion":"client.authentication.k8s.io/v1","status":{"token":"t"}}'"#,
        );
        let r = run(&cfg, quick()).await;
        assert!(r.is_ok(), "{r:?}");
    }

    #[tokio::test]
    async fn hostile_plugins_are_bounded() {
        let (_d, hang) = script("sleep 600 &\nsleep 600");
        let e = run(&hang, quick()).await.unwrap_err();
        assert!(matches!(e, ExecError::Timeout { .. }), "{e}");

        let (_d, big) = script("head -c 200000000 /dev/zero");
        let e = run(&big, quick()).await.unwrap_err();
        assert!(matches!(e, ExecError::TooLarge { .. }), "{e}");

        let (_d, garbage) = script("echo 'secret-garbage{{{'");
        let e = run(&garbage, quick()).await.unwrap_err();
        assert!(matches!(e, ExecError::Invalid { .. }), "{e}");
        assert!(!e.to_string().contains("secret-garbage"), "{e}");

        let (_d, failing) = script("echo token-in-output; exit 7");
        let e = run(&failing, quick()).await.unwrap_err();
        assert!(e.to_string().contains("exit status: 7"), "{e}");
        assert!(!e.to_string().contains("token-in-output"), "{e}");
    }

    #[tokio::test]
    async fn a_missing_command_shows_the_install_hint() {
        let cfg = ExecProviderConfig {
            command: "/nonexistent/get-token".into(),
            api_version: V1.into(),
            install_hint: Some("brew install get-token".into()),
            ..Default::default()
        };
        let e = run(&cfg, quick()).await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "exec: executable /nonexistent/get-token not found\n\nbrew install get-token"
        );
    }

    #[test]
    fn credentials_are_checked_as_client_go_does() {
        let p = |s: &str| parse("c", V1, s.as_bytes());
        assert!(
            p(r#"{"apiVersion":"client.authentication.k8s.io/v1beta1","status":{"token":"t"}}"#)
                .is_err()
        );
        assert!(p(r#"{"apiVersion":"client.authentication.k8s.io/v1"}"#).is_err());
        assert!(p(r#"{"apiVersion":"client.authentication.k8s.io/v1","status":{}}"#).is_err());
        assert!(
            p(r#"{"apiVersion":"client.authentication.k8s.io/v1","status":{"clientKeyData":"k"}}"#)
                .is_err()
        );
        assert!(p(r#"{"apiVersion":"client.authentication.k8s.io/v1","status":{"token":"t","expirationTimestamp":"soon"}}"#).is_err());
        let c = p(r#"{"apiVersion":"client.authentication.k8s.io/v1","status":{"clientCertificateData":"c","clientKeyData":"k","expirationTimestamp":"2000-01-01T00:00:00Z"}}"#).unwrap();
        assert!(!c.is_fresh(jiff::Timestamp::now()));
    }
}

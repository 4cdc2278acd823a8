//! Git over SSH: the `ssh` command gix runs, and its host key failures in Argo CD's words.
//!
//! `ssh` reads no configuration but this command line (`-F /dev/null`: neither the user's
//! `~/.ssh/config` nor the system's can loosen it) and trusts only the host keys of
//! `argocd-ssh-known-hosts-cm` (`UserKnownHostsFile`, no global file, strict checking): an
//! unknown or changed host key is refused. `insecure: "true"` on the repository skips the check,
//! as Argo CD's `InsecureIgnoreHostKey` does.

use std::path::Path;

/// The `core.sshCommand` for a repository: its key (if any), the known hosts file, and whether
/// host keys are checked.
/// `ssh` writes its own errors (host key refusals among them) to `log`, which gix does not pass
/// on otherwise: [`explain`] reads it back.
pub(crate) fn command(
    key: Option<&Path>,
    known_hosts: &Path,
    insecure: bool,
    log: &Path,
) -> String {
    let mut cmd = format!(
        "ssh -F /dev/null -E {} -o BatchMode=yes -o IdentitiesOnly=yes",
        log.display()
    );
    if let Some(key) = key {
        cmd.push_str(&format!(" -i {}", key.display()));
    }
    if insecure {
        cmd.push_str(" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null");
    } else {
        cmd.push_str(&format!(
            " -o StrictHostKeyChecking=yes -o UserKnownHostsFile={} -o GlobalKnownHostsFile=/dev/null",
            known_hosts.display()
        ));
    }
    cmd.push_str(" -o LogLevel=ERROR");
    cmd
}

/// `detail` (a failed fetch's message) with what `ssh` logged to `log` (removed then), and
/// Argo's words first when `ssh` refused the host key.
pub(crate) fn explain_with_log(detail: String, log: Option<&Path>) -> String {
    let Some(log) = log else { return detail };
    let mut text = String::new();
    if let Ok(file) = std::fs::File::open(log) {
        use std::io::Read;
        let _ = file.take(8192).read_to_string(&mut text);
    }
    let _ = std::fs::remove_file(log);
    let logged: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if logged.is_empty() {
        return explain(detail);
    }
    explain(format!("{detail}: ssh: {}", logged.join(" ")))
}

/// `detail` with Argo's words first when `ssh` refused the host key.
pub(crate) fn explain(detail: String) -> String {
    let changed = detail.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
        || detail.contains("Host key for") && detail.contains("has changed");
    let unknown =
        detail.contains("Host key verification failed") || detail.contains("host key is known for");
    let what = if changed {
        "key mismatch"
    } else if unknown {
        "key is unknown"
    } else {
        return detail;
    };
    format!(
        "ssh: handshake failed: knownhosts: {what} (the server's host key is not the one in \
         argocd-ssh-known-hosts-cm; add the right key there, or set insecure: \"true\" on the \
         repository to skip host key verification): {detail}"
    )
}

/// A key `ssh` cannot read fails here, before any connection, naming the field: `ssh` itself
/// says "invalid format" only in its own log, after connecting. The key is never quoted.
pub(crate) fn check_key(pem: &str) -> std::result::Result<(), String> {
    let mut lines = pem.trim_start().lines();
    let begins = lines.next().is_some_and(|l| {
        l.starts_with("-----BEGIN ") && l.trim_end().ends_with("PRIVATE KEY-----")
    });
    let body = lines.next().is_some_and(|l| !l.starts_with("-----"));
    if begins && body && pem.contains("-----END ") {
        Ok(())
    } else {
        Err(
            "sshPrivateKey of the repository Secret is not a PEM private key \
             (no -----BEGIN ... PRIVATE KEY----- block)"
                .to_owned(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_ssh_cannot_read_are_refused_without_quoting_them() {
        let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n-----END OPENSSH PRIVATE KEY-----\n";
        assert!(check_key(key).is_ok());
        assert!(check_key(&format!("\n{}", key.replace('\n', "\r\n"))).is_ok());
        for bad in [
            "secret-looking-text",
            "",
            "-----BEGIN PUBLIC KEY-----\nc2VjcmV0\n-----END PUBLIC KEY-----\n",
            "-----BEGIN OPENSSH PRIVATE KEY-----\n-----END OPENSSH PRIVATE KEY-----\n",
            "-----BEGIN RSA PRIVATE KEY-----\nc2VjcmV0\n",
        ] {
            let err = check_key(bad).unwrap_err();
            assert!(err.starts_with("sshPrivateKey"), "{err}");
            assert!(
                !err.contains("secret") && !err.contains("c2VjcmV0"),
                "{err}"
            );
        }
    }

    #[test]
    fn strict_unless_insecure() {
        let kh = Path::new("/c/keys/known_hosts-1");
        let log = Path::new("/c/keys/ssh.log");
        let strict = command(Some(Path::new("/c/keys/k.key")), kh, false, log);
        assert!(strict.contains("StrictHostKeyChecking=yes"), "{strict}");
        assert!(strict.contains("UserKnownHostsFile=/c/keys/known_hosts-1"));
        assert!(strict.contains("-F /dev/null") && strict.contains("-i /c/keys/k.key"));
        let loose = command(None, kh, true, log);
        assert!(loose.contains("StrictHostKeyChecking=no") && !loose.contains("known_hosts-1"));
    }

    #[test]
    fn host_key_failures_are_named_as_argo_names_them() {
        let e = explain("No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.\r\nHost key verification failed.".into());
        assert!(
            e.starts_with("ssh: handshake failed: knownhosts: key is unknown"),
            "{e}"
        );
        let e = explain("@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@".into());
        assert!(e.contains("knownhosts: key mismatch"), "{e}");
        assert_eq!(explain("connection refused".into()), "connection refused");
    }
}

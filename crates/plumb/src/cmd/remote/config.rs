//! The CLI's config file, in the layout of Argo CD's `~/.config/argocd/config` (contexts, servers,
//! users, `current-context`), at `~/.config/plumb/config` (`$XDG_CONFIG_HOME/plumb/config`;
//! `--config` or `PLUMB_CONFIG` override). It holds tokens, so it is written with mode 0600.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// A context: a server and the user to call it as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextRef {
    pub name: String,
    pub server: String,
    pub user: String,
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Server {
    pub server: String,
    /// Skip verifying the server's certificate (the generated self-signed one).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insecure: bool,
    /// Plain HTTP.
    #[serde(
        rename = "plain-text",
        default,
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub plain_text: bool,
}

/// A user's token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    pub name: String,
    #[serde(
        rename = "auth-token",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub auth_token: String,
    /// The identity provider's refresh token of an SSO login (Argo's `refresh-token`): the ID
    /// token above is renewed with it when it expires.
    #[serde(
        rename = "refresh-token",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_token: String,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct LocalConfig {
    #[serde(default)]
    pub contexts: Vec<ContextRef>,
    #[serde(
        rename = "current-context",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub current_context: String,
    #[serde(default)]
    pub servers: Vec<Server>,
    #[serde(default)]
    pub users: Vec<User>,
}

/// Where the config file is: `--config`, `$PLUMB_CONFIG`, `$XDG_CONFIG_HOME/plumb/config`,
/// `~/.config/plumb/config`.
pub fn default_path(flag: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = flag {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("PLUMB_CONFIG").filter(|p| !p.is_empty()) {
        return Ok(p.into());
    }
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .map(|d| d.join("plumb").join("config"))
        .context("no HOME or XDG_CONFIG_HOME for the config file; give --config")
}

impl LocalConfig {
    /// Reads the file; a missing file is an empty config.
    pub fn load(path: &Path) -> Result<Self> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let docs = plumb_yaml::read_documents(&text, &path.display().to_string())
            .with_context(|| format!("reading {}", path.display()))?;
        let Some(doc) = docs.into_iter().next() else {
            return Ok(Self::default());
        };
        serde_json::from_value(doc.value).with_context(|| format!("reading {}", path.display()))
    }

    /// Writes the file (mode 0600: it holds tokens), creating its directory.
    pub fn save(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let text = plumb_yaml::to_yaml_string(&serde_json::to_value(self)?);
        let tmp = path.with_extension("tmp");
        {
            use std::os::unix::fs::OpenOptionsExt;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&tmp)
                .with_context(|| format!("writing {}", tmp.display()))?;
            f.write_all(text.as_bytes())
                .with_context(|| format!("writing {}", tmp.display()))?;
        }
        std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
    }

    pub fn context(&self, name: &str) -> Option<&ContextRef> {
        self.contexts.iter().find(|c| c.name == name)
    }

    pub fn server(&self, name: &str) -> Option<&Server> {
        self.servers.iter().find(|s| s.server == name)
    }

    pub fn user(&self, name: &str) -> Option<&User> {
        self.users.iter().find(|u| u.name == name)
    }

    /// Records a login: the server, the user's token, a context named `name`, made current.
    pub fn upsert(&mut self, name: &str, server: Server, token: &str) {
        self.servers.retain(|s| s.server != server.server);
        self.users.retain(|u| u.name != name);
        self.contexts.retain(|c| c.name != name);
        self.contexts.push(ContextRef {
            name: name.to_string(),
            server: server.server.clone(),
            user: name.to_string(),
        });
        self.users.push(User {
            name: name.to_string(),
            auth_token: token.to_string(),
            refresh_token: String::new(),
        });
        self.servers.push(server);
        self.current_context = name.to_string();
        self.contexts.sort_by(|a, b| a.name.cmp(&b.name));
        self.servers.sort_by(|a, b| a.server.cmp(&b.server));
        self.users.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// Sets the tokens of user `name` (a refresh or a relogin), keeping its contexts.
    pub fn set_tokens(&mut self, name: &str, token: &str, refresh_token: Option<&str>) {
        self.users.retain(|u| u.name != name);
        self.users.push(User {
            name: name.to_string(),
            auth_token: token.to_string(),
            refresh_token: refresh_token.unwrap_or_default().to_string(),
        });
        self.users.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// Forgets the tokens of context `name` (Argo's logout keeps the context).
    pub fn logout(&mut self, name: &str) -> Result<()> {
        let Some(ctx) = self.context(name).cloned() else {
            bail!("context '{name}' undefined");
        };
        for u in self.users.iter_mut().filter(|u| u.name == ctx.user) {
            u.auth_token.clear();
            u.refresh_token.clear();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argo_layout_round_trips_with_mode_0600() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub").join("config");
        let mut c = LocalConfig::default();
        c.upsert(
            "localhost:8080",
            Server {
                server: "localhost:8080".into(),
                insecure: true,
                plain_text: false,
            },
            "tok",
        );
        c.save(&path).expect("save");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.contains("current-context: localhost:8080"), "{text}");
        assert!(text.contains("auth-token: tok"), "{text}");
        assert!(!text.contains("refresh-token"), "{text}");
        assert!(text.contains("insecure: true"), "{text}");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let back = LocalConfig::load(&path).expect("load");
        assert_eq!(back, c);
        let mut out = back.clone();
        out.set_tokens("localhost:8080", "id", Some("refresh"));
        out.save(&path).expect("save");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.contains("refresh-token: refresh"), "{text}");
        assert_eq!(LocalConfig::load(&path).expect("load"), out);
        out.logout("localhost:8080").expect("logout");
        let user = out.user("localhost:8080").expect("user");
        assert_eq!(
            (user.auth_token.as_str(), user.refresh_token.as_str()),
            ("", "")
        );
        assert!(out.logout("nope").is_err());
        assert_eq!(
            LocalConfig::load(&dir.path().join("none")).expect("empty"),
            LocalConfig::default()
        );
    }
}

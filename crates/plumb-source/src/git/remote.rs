//! Talking to a remote with gix: ref listing (ls-remote) and fetching into the bare cache repository.
//!
//! Each operation runs on its own thread so a hung server cannot hold the caller past the fetch
//! timeout: the caller stops waiting, raises gix's interrupt flag and reports
//! [`Error::FetchTimeout`]; HTTP low-speed limits make the abandoned thread end soon after.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use gix::remote::Direction;

pub(crate) use super::error_text::chain;
use super::revision::RemoteRef;
use crate::credentials::{RepoCredentials, TlsCerts, TokenCache};
use crate::error::{Error, Result};
use crate::redact::Redactor;

/// The refspecs the cache repository mirrors: every branch and tag, force-updated.
const MIRROR_SPECS: [&str; 2] = ["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"];

/// What to do once connected.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    /// List refs only.
    List,
    /// Fetch all branches and tags plus `extra` full ref names (like `refs/pull/1/head`).
    Fetch { extra: Vec<String> },
}

/// Everything a worker thread needs, owned.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    pub repo_dir: PathBuf,
    pub lock_path: PathBuf,
    pub url: String,
    pub credentials: Option<RepoCredentials>,
    /// `core.sshCommand` for an ssh URL ([`super::ssh::command`]), and where it logs.
    pub ssh_command: Option<String>,
    pub ssh_log: Option<PathBuf>,
    pub certs: TlsCerts,
    pub tokens: Arc<TokenCache>,
    pub timeout: Duration,
    pub op: Op,
}

/// Runs `job` on a worker thread and waits at most `job.timeout` for it.
pub(crate) fn run(job: Job) -> Result<Vec<RemoteRef>> {
    let url = job.url.clone();
    let timeout = job.timeout;
    let ssh_log = job.ssh_log.clone();
    let redactor = Redactor::new(job.credentials.iter().flat_map(RepoCredentials::secrets));
    let interrupt = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::sync_channel(1);
    let flag = Arc::clone(&interrupt);
    std::thread::Builder::new()
        .name("plumb-git".into())
        .spawn(move || {
            let _ = tx.send(run_locked(&job, &flag));
        })
        .map_err(Error::io("spawning a git worker for", PathBuf::from(&url)))?;
    match rx.recv_timeout(timeout) {
        Ok(Ok(refs)) => {
            if let Some(log) = &ssh_log {
                let _ = std::fs::remove_file(log);
            }
            Ok(refs)
        }
        Ok(Err(detail)) => Err(Error::RepositoryUnreachable {
            url,
            detail: redactor.clean(&super::ssh::explain_with_log(detail, ssh_log.as_deref())),
        }),
        Err(_) => {
            interrupt.store(true, Ordering::Relaxed);
            Err(Error::FetchTimeout {
                url,
                limit: timeout,
            })
        }
    }
}

fn run_locked(job: &Job, interrupt: &AtomicBool) -> std::result::Result<Vec<RemoteRef>, String> {
    // Listing never writes, so only fetches take the per-repository lock.
    ensure_repo(&job.repo_dir, &job.lock_path)?;
    let _guard = match job.op {
        Op::Fetch { .. } => Some(lock(&job.lock_path)?),
        Op::List => None,
    };
    let repo = open(&job.repo_dir, job.ssh_command.as_deref(), job.timeout)?;
    let mut specs: Vec<String> = MIRROR_SPECS.iter().map(|s| (*s).to_owned()).collect();
    if let Op::Fetch { extra } = &job.op {
        specs.extend(extra.iter().map(|r| format!("+{r}:{r}")));
    }
    let remote = repo
        .remote_at(job.url.as_str())
        .and_then(|r| r.with_refspecs(specs.iter().map(String::as_str), Direction::Fetch))
        .map_err(|e| chain(&e))?;
    let account = account(job)?;
    let force_basic = account
        .as_ref()
        .filter(|_| {
            job.credentials
                .as_ref()
                .is_some_and(|c| c.force_http_basic_auth)
        })
        .map(|a| (a.username.clone(), a.password.clone()));
    let transport = super::http::options(
        &repo,
        &job.url,
        job.credentials.as_ref(),
        &job.certs,
        force_basic,
    )?;
    let mut connection = remote.connect(Direction::Fetch).map_err(|e| chain(&e))?;
    if let Some(options) = transport {
        connection = connection.with_transport_options(options);
    }
    // Never fall back to git's credential helpers or a terminal prompt: a controller has no user.
    let connection = connection.with_credentials(move |action| match action {
        gix::credentials::helper::Action::Get(ctx) => {
            Ok(account
                .clone()
                .map(|identity| gix::credentials::protocol::Outcome {
                    identity,
                    next: ctx.into(),
                }))
        }
        _ => Ok(None),
    });
    let options = gix::remote::ref_map::Options {
        prefix_from_spec_as_filter_on_remote: false,
        ..Default::default()
    };
    let refs = match &job.op {
        Op::List => {
            let (map, _handshake) = connection
                .ref_map(gix::progress::Discard, options)
                .map_err(|e| chain(&e))?;
            map.remote_refs
        }
        Op::Fetch { .. } => {
            let prepared = connection
                .prepare_fetch(gix::progress::Discard, options)
                .map_err(|e| chain(&e))?;
            let outcome = prepared
                .receive(gix::progress::Discard, interrupt)
                .map_err(|e| chain(&e))?;
            outcome.ref_map.remote_refs
        }
    };
    Ok(refs.into_iter().filter_map(convert).collect())
}

/// The HTTPS user and password: a GitHub App's installation token, else the Secret's password
/// (none with a `bearerToken`, which goes in its own header).
fn account(job: &Job) -> std::result::Result<Option<gix::sec::identity::Account>, String> {
    let Some(c) = job.credentials.as_ref() else {
        return Ok(None);
    };
    let is_http = job.url.starts_with("http://") || job.url.starts_with("https://");
    if let Some(app) = c.github_app.as_ref().filter(|_| is_http) {
        let timeout = job.timeout;
        let client = |url: &reqwest::Url| {
            let b = reqwest::blocking::Client::builder()
                .timeout(timeout)
                .connect_timeout(timeout)
                .redirect(reqwest::redirect::Policy::none());
            crate::http_client::configure(b, url.host_str(), Some(c), &job.certs)?
                .build()
                .map_err(|e| chain(&e))
        };
        let token = job.tokens.token(app, &job.url, &client)?;
        return Ok(Some(gix::sec::identity::Account {
            username: crate::credentials::TOKEN_USER.to_owned(),
            password: token,
            oauth_refresh_token: None,
        }));
    }
    if c.bearer_token.is_some() {
        return Ok(None);
    }
    Ok(c.password.as_ref().map(|p| gix::sec::identity::Account {
        username: c.username.clone().unwrap_or_else(|| "git".to_owned()),
        password: p.clone(),
        oauth_refresh_token: None,
    }))
}

fn convert(r: gix::protocol::handshake::Ref) -> Option<RemoteRef> {
    use gix::protocol::handshake::Ref;
    Some(match r {
        Ref::Peeled {
            full_ref_name,
            object,
            ..
        }
        | Ref::Direct {
            full_ref_name,
            object,
        } => RemoteRef {
            name: full_ref_name.to_string(),
            target: object.to_string(),
            symref_target: None,
        },
        Ref::Symbolic {
            full_ref_name,
            target,
            object,
            ..
        } => RemoteRef {
            name: full_ref_name.to_string(),
            target: object.to_string(),
            symref_target: Some(target.to_string()),
        },
        Ref::Unborn { .. } => return None,
    })
}

/// Opens (creating on first use) the bare cache repository, isolated from the user's Git config.
pub(crate) fn open(
    dir: &Path,
    ssh_command: Option<&str>,
    timeout: Duration,
) -> std::result::Result<gix::Repository, String> {
    ensure_repo(dir, &dir.with_extension("lock"))?;
    let secs = timeout.as_secs().max(1);
    let mut overrides = vec![
        "http.lowSpeedLimit=1".to_owned(),
        format!("http.lowSpeedTime={secs}"),
        format!(
            "gitoxide.http.connectTimeout={}",
            timeout.as_millis().max(1000)
        ),
        "protocol.allow=always".to_owned(),
    ];
    if let Some(cmd) = ssh_command {
        overrides.push(format!("core.sshCommand={cmd}"));
    }
    gix::open_opts(
        dir,
        gix::open::Options::isolated().config_overrides(overrides),
    )
    .map_err(|e| chain(&e))
}

/// Creates the bare cache repository once, atomically: initialised beside its final place under
/// the lock, then renamed, so no reader ever opens a half-written one.
pub(crate) fn ensure_repo(dir: &Path, lock_path: &Path) -> std::result::Result<(), String> {
    if dir.join("HEAD").exists() {
        return Ok(());
    }
    let _guard = lock(lock_path)?;
    if dir.join("HEAD").exists() {
        return Ok(());
    }
    let parent = dir
        .parent()
        .ok_or_else(|| format!("{} has no parent", dir.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(".init-")
        .tempdir_in(parent)
        .map_err(|e| format!("creating a staging directory in {}: {e}", parent.display()))?;
    let repo = staging.path().join("repo.git");
    gix::init_bare(&repo).map_err(|e| chain(&e))?;
    std::fs::rename(&repo, dir).map_err(|e| format!("renaming into {}: {e}", dir.display()))
}

/// Holds the per-repository lock file until dropped.
pub(crate) struct LockGuard(std::fs::File);

impl Drop for LockGuard {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

pub(crate) fn lock(path: &Path) -> std::result::Result<LockGuard, String> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| format!("opening lock {}: {e}", path.display()))?;
    file.lock()
        .map_err(|e| format!("locking {}: {e}", path.display()))?;
    Ok(LockGuard(file))
}

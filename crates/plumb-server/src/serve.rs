//! The listener: TCP accept, TLS handshake per connection (off the accept loop, with a deadline),
//! HTTP/1.1 and HTTP/2 through hyper-util, graceful shutdown (stop accepting, let requests
//! finish, end watch streams, then give up after a grace period).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use plumb_source::Renderer;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::ServerConfig;
use crate::error::{Error, Result};
use crate::state::AppState;

/// How long a client may take to finish the TLS handshake.
const HANDSHAKE_DEADLINE: Duration = Duration::from_secs(10);
/// How long a client may take to send a request's headers (slow-loris clients are cut off).
const HEADER_DEADLINE: Duration = Duration::from_secs(10);
/// How long shutdown waits for open requests.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(20);

/// A running server.
pub struct Running {
    /// The address it listens on (the real port when configured with port 0).
    pub addr: SocketAddr,
    /// The serving certificate (PEM), `None` in plaintext mode.
    pub certificate_pem: Option<String>,
    /// Where `/metrics` is served (the real port when configured with port 0).
    pub metrics_addr: Option<SocketAddr>,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
    /// The watch on repository Secrets and CA certificates; it never ends by itself.
    repositories: JoinHandle<()>,
    /// The watch that keeps the Application cache current; it never ends by itself.
    app_cache: JoinHandle<()>,
}

impl Running {
    /// Stops accepting, lets open requests finish (ending watch streams), and returns when all
    /// connections closed or the grace period passed.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
        self.repositories.abort();
        let _ = self.repositories.await;
        self.app_cache.abort();
        let _ = self.app_cache.await;
    }

    /// Waits until the server stops (it only stops through [`Running::shutdown`]).
    pub async fn wait(&mut self) {
        let _ = (&mut self.task).await;
    }
}

/// Binds and starts serving in the background.
pub async fn serve(client: kube::Client, config: ServerConfig) -> Result<Running> {
    check_listen(&config)?;
    let tls = crate::tls::server_config(&config.tls)?;
    let renderer = Arc::new(
        Renderer::new(config.source.clone())
            .map_err(|e| Error::Internal(format!("preparing the source cache: {e}")))?,
    );
    // Renders for the manifests endpoint use the repository Secrets and CA certificates the
    // controller uses, kept current while the server runs.
    plumb_app::load_repositories(&client, &config.control_namespace, &renderer).await;
    crate::default_project::ensure(&client, &config.control_namespace).await?;
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| Error::Io {
            context: format!("listening on {}", config.listen),
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| Error::Io {
        context: "reading the listening address".into(),
        source,
    })?;
    let auth = authentication(&client, &config).await?;
    let logins = auth.as_ref().map(|a| a.logins());
    let guard = request_guard(&client, &config, tls.is_none()).await?;
    let app_namespaces = match &config.application_namespaces {
        Some(list) => list.clone(),
        None => plumb_app::application_namespaces(&client, &config.control_namespace)
            .await
            .map_err(|e| Error::Internal(plumb_app::chain(&e)))?,
    };
    // Started last, once nothing fallible is left, so an early error leaves no task behind.
    let repositories = tokio::spawn(plumb_app::watch_repositories(
        client.clone(),
        config.control_namespace.clone(),
        renderer.clone(),
        || {},
    ));
    let (stop, stop_rx) = watch::channel(false);
    let state = AppState::new(
        client,
        config.control_namespace.clone(),
        renderer,
        stop_rx.clone(),
        auth,
    )
    .with_app_namespaces(app_namespaces)
    .with_customizations(config.customizations.clone())
    .with_build(config.build.clone())
    .with_appset_cache(config.source.cache_dir.join("applicationsets"));
    let metrics = server_metrics(logins, &state.client);
    let metrics_addr = match config.metrics_listen {
        Some(addr) => Some(crate::metrics::listen(addr, metrics.clone(), stop_rx.clone()).await?),
        None => None,
    };
    let app_cache = tokio::spawn(
        state
            .app_cache
            .clone()
            .feed(state.app_cache.api(state.client.clone())),
    );
    let app = with_security_headers(
        crate::routes::router(state, &config.limits, metrics)
            .layer(axum::Extension(crate::routes::SecureCookie(tls.is_some())))
            .layer(axum::Extension(guard)),
    );
    let certificate_pem = tls.as_ref().map(|(_, pem)| pem.clone());
    let acceptor = tls.map(|(cfg, _)| tokio_rustls::TlsAcceptor::from(cfg));
    tracing::info!(%addr, tls = acceptor.is_some(), "plumb server listening");
    let front = crate::grpc::Front::new(app, &config.limits); // gRPC, REST: one port
    let task = tokio::spawn(accept_loop(listener, acceptor, front, stop_rx));
    Ok(Running {
        addr,
        certificate_pem,
        metrics_addr,
        stop,
        task,
        repositories,
        app_cache,
    })
}

/// The server's metrics, with the login counters when there is authentication.
fn server_metrics(
    logins: Option<crate::auth::LoginCounter>,
    client: &kube::Client,
) -> Arc<crate::metrics::ServerMetrics> {
    let mut metrics = crate::metrics::ServerMetrics::new();
    if let Some(logins) = logins {
        metrics.register_logins(logins);
    }
    Arc::new(metrics.checking_crds(client))
}

/// Without authentication every caller may do everything: then only callers of this machine.
fn check_listen(config: &ServerConfig) -> Result<()> {
    if config.disable_auth && !config.listen.ip().is_loopback() {
        return Err(Error::InvalidArgument(format!(
            "--disable-auth serves every caller as an administrator, so it listens on loopback \
             only: {} is not a loopback address (use --listen 127.0.0.1:PORT)",
            config.listen
        )));
    }
    Ok(())
}

/// The authentication state, after Argo's start-up writes (signing key, admin password); none
/// with `--disable-auth`.
async fn authentication(
    client: &kube::Client,
    config: &ServerConfig,
) -> Result<Option<Arc<crate::auth::Auth>>> {
    if config.disable_auth {
        tracing::warn!(
            "authentication is disabled: every caller may read and write every Application"
        );
        return Ok(None);
    }
    crate::auth::bootstrap(client, &config.control_namespace).await?;
    Ok(Some(Arc::new(crate::auth::Auth::new(
        config.login_throttle.clone(),
        &config.dex_server,
        config.limits.request_timeout,
    ))))
}

/// What the cross-site checks need: the allowed content types (configured, else
/// argocd-cmd-params-cm's, read once at start as Argo reads its flags) and whether TLS ends here.
async fn request_guard(
    client: &kube::Client,
    config: &ServerConfig,
    plaintext: bool,
) -> Result<crate::auth::RequestGuard> {
    let content_types = match &config.api_content_types {
        Some(types) => crate::auth::ApiContentTypes::parse(Some(types)),
        None => crate::auth::ApiContentTypes::read(client, &config.control_namespace).await?,
    };
    Ok(crate::auth::RequestGuard {
        content_types,
        plaintext,
    })
}

/// Argo's headers against clickjacking and content sniffing on every answer (pages, API,
/// errors, the limits' refusals), unless the answer set its own.
fn with_security_headers(app: axum::Router) -> axum::Router {
    use axum::http::{HeaderValue, header};
    use tower_http::set_header::SetResponseHeaderLayer;
    app.layer(SetResponseHeaderLayer::if_not_present(
        header::X_FRAME_OPTIONS,
        HeaderValue::from_static("sameorigin"),
    ))
    .layer(SetResponseHeaderLayer::if_not_present(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("frame-ancestors 'self';"),
    ))
    .layer(SetResponseHeaderLayer::if_not_present(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    ))
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    app: crate::grpc::Front,
    mut stop: watch::Receiver<bool>,
) {
    let graceful = GracefulShutdown::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (tcp, peer) = match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        // Out of file descriptors and the like: back off instead of spinning.
                        tracing::warn!("accepting a connection: {e}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let watcher = graceful.watcher();
                let app = app.clone();
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    match acceptor {
                        None => serve_connection(tcp, app, watcher).await,
                        Some(acceptor) => match tokio::time::timeout(HANDSHAKE_DEADLINE, acceptor.accept(tcp)).await {
                            Ok(Ok(tls)) => serve_connection(tls, app, watcher).await,
                            Ok(Err(e)) => tracing::debug!(%peer, "TLS handshake failed: {e}"),
                            Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                        },
                    }
                });
            }
            _ = stop.changed() => break,
        }
    }
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the shutdown grace period; closing them");
    }
}

/// Room for the longest token the server accepts plus the other headers of a request.
const MAX_HEADER_LIST_BYTES: u32 = 128 * 1024;

async fn serve_connection<I>(
    io: I,
    app: crate::grpc::Front,
    watcher: hyper_util::server::graceful::Watcher,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = TowerToHyperService::new(app);
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_DEADLINE);
    // hyper's HTTP/2 default (16 KiB of headers) would answer 431 to the split `argocd.token`
    // cookies of a large SSO token (up to `max_token_bytes`, about 80 KiB) that HTTP/1.1 passes.
    builder.http2().max_header_list_size(MAX_HEADER_LIST_BYTES);
    let conn = builder.serve_connection_with_upgrades(TokioIo::new(io), service);
    if let Err(e) = watcher.watch(conn.into_owned()).await {
        tracing::debug!("connection ended: {e}");
    }
}

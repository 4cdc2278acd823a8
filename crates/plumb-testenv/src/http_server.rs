//! The HTTP/1.1 server under the test servers ([`crate::git_http`], [`crate::chart_repo`]): an
//! axum router served by hyper on a thread and runtime of its own, so that the fixtures stay
//! synchronous to start and to stop. One request per connection, answered with `Connection:
//! close`, and TLS when asked.

use std::net::SocketAddr;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio_rustls::TlsAcceptor;

/// A client that sends no request head for this long is dropped.
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// A running server; stops listening when dropped.
#[derive(Debug)]
pub(crate) struct HttpServer {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    closed: mpsc::Receiver<()>,
}

impl HttpServer {
    /// Serves `router` on 127.0.0.1:`port` (0: a free one), over TLS with `tls`. Panics when the
    /// port cannot be bound, as a fixture does.
    pub(crate) fn start(port: u16, tls: Option<Arc<rustls::ServerConfig>>, router: Router) -> Self {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))
            .unwrap_or_else(|e| panic!("binding 127.0.0.1:{port}: {e}"));
        let addr = listener.local_addr().expect("local address");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let (stop, stopped) = oneshot::channel();
        let (closed_tx, closed) = mpsc::channel();
        let tls = tls.map(TlsAcceptor::from);
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("test server runtime");
            runtime.block_on(serve(listener, tls, router, stopped, closed_tx));
        });
        Self {
            addr,
            stop: Some(stop),
            closed,
        }
    }

    /// The address the server listens on.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // Returns once the listener is closed, so that the port can be bound again (fault tests
        // restart a server on it); requests in flight finish on the server's thread.
        let _ = self.closed.recv();
    }
}

async fn serve(
    listener: std::net::TcpListener,
    tls: Option<TlsAcceptor>,
    router: Router,
    mut stopped: oneshot::Receiver<()>,
    closed: mpsc::Sender<()>,
) {
    let graceful = GracefulShutdown::new();
    if let Ok(listener) = TcpListener::from_std(listener) {
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let task = connection(stream, tls.clone(), router.clone(), graceful.watcher());
                        tokio::spawn(task);
                    }
                    Err(_) => break,
                },
                _ = &mut stopped => break,
            }
        }
    }
    let _ = closed.send(());
    graceful.shutdown().await;
}

/// One connection: the TLS handshake when there is TLS (a failed one drops the connection),
/// then HTTP.
async fn connection(stream: TcpStream, tls: Option<TlsAcceptor>, router: Router, watcher: Watcher) {
    match tls {
        Some(acceptor) => {
            if let Ok(stream) = acceptor.accept(stream).await {
                http(stream, router, watcher).await;
            }
        }
        None => http(stream, router, watcher).await,
    }
}

async fn http<S>(io: S, router: Router, watcher: Watcher)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .keep_alive(false)
        .title_case_headers(true)
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT);
    let conn = builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(router));
    let _ = watcher.watch(conn).await;
}

/// The `Authorization` value of Basic credentials (RFC 7617).
pub fn basic_auth(user: &str, password: &str) -> String {
    use base64::Engine;
    let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    format!("Basic {token}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn basic_auth_matches_rfc_4648_vectors() {
        assert_eq!(super::basic_auth("f", ""), "Basic Zjo=");
        assert_eq!(super::basic_auth("bot", "s3cret"), "Basic Ym90OnMzY3JldA==");
    }
}

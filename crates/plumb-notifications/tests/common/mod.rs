//! A real HTTP receiver on loopback that records what it gets and answers with the statuses
//! it is told to (then 200).

#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub headers: HeaderMap,
    pub body: String,
}

#[derive(Default)]
struct State {
    received: Vec<Received>,
    statuses: VecDeque<u16>,
    reply: String,
}

/// The receiver; its server task ends with the test's runtime.
#[derive(Clone)]
pub struct Receiver {
    pub url: String,
    state: Arc<Mutex<State>>,
    notify: Arc<tokio::sync::Notify>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        let state = Arc::new(Mutex::new(State::default()));
        let notify = Arc::new(tokio::sync::Notify::new());
        let (s, n) = (state.clone(), notify.clone());
        let app = axum::Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let (s, n) = (s.clone(), n.clone());
                async move {
                    let (status, reply) = {
                        let mut st = s.lock().expect("lock");
                        st.received.push(Received {
                            method: method.to_string(),
                            path: uri.to_string(),
                            headers,
                            body: String::from_utf8_lossy(&body).into_owned(),
                        });
                        (st.statuses.pop_front().unwrap_or(200), st.reply.clone())
                    };
                    n.notify_waiters();
                    (
                        StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
                        reply,
                    )
                }
            },
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
        Receiver {
            url: format!("http://{addr}"),
            state,
            notify,
        }
    }

    /// The next answers (then 200).
    pub fn answer(&self, statuses: &[u16]) {
        self.state.lock().expect("lock").statuses.extend(statuses);
    }

    /// The body of every answer from now on (empty by default).
    pub fn reply(&self, body: &str) {
        self.state.lock().expect("lock").reply = body.to_string();
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.lock().expect("lock").received.clone()
    }

    /// Waits until `n` requests arrived (the test's own deadline bounds it).
    pub async fn wait_for(&self, n: usize) -> Vec<Received> {
        loop {
            let notified = self.notify.notified();
            let r = self.received();
            if r.len() >= n {
                return r;
            }
            let _ = tokio::time::timeout(std::time::Duration::from_millis(200), notified).await;
        }
    }
}

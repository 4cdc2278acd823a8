//! Watching one Application through `plumb server`: the server's watch stream (Argo's
//! `GET /api/v1/stream/applications?name=`, newline-delimited `{"result": {"type",
//! "application"}}`), so `app wait`, `app sync` and `--refresh` see a change when it happens
//! instead of at the next poll. The stream is opened before the Application is read, so nothing
//! that happens in between is missed; a stream that ends (a server restart, an idle proxy) is
//! opened again.

use std::collections::VecDeque;
use std::time::Duration;

use anyhow::Result;
use futures::StreamExt;
use plumb_model::application::Application;
use serde_json::Value;

use crate::cmd::app::backend::objects::application;
use crate::cmd::app::client::{AppClient, AppStream};
use crate::cmd::remote::{ServerClient, enc};

/// Pause before opening the stream again after it ended or failed.
const REOPEN_AFTER: Duration = Duration::from_secs(1);

/// Longest line accepted from the stream (an Application is far smaller): a server that never
/// ends a line cannot make the CLI grow without bound.
const MAX_LINE: usize = 32 * 1024 * 1024;

struct State {
    server: ServerClient,
    client: AppClient,
    qualified: String,
    path: String,
    response: Option<reqwest::Response>,
    buf: Vec<u8>,
    /// resourceVersion of the last Application passed on (the same version is not repeated).
    last: Option<String>,
    queue: VecDeque<Result<Option<Application>>>,
    ended: bool,
    /// Whether the stream was opened before (a reopen waits first).
    opened_before: bool,
}

/// The Application `qualified` as it is, then every change; `None` (and the end) when it does not
/// exist or was deleted. Errors are passed through and the stream is opened again.
pub(crate) fn watch(server: ServerClient, client: AppClient, qualified: &str) -> AppStream {
    let (ns, name) = client.locate(qualified);
    let (namespace, name) = (ns.to_string(), name.to_string());
    let state = State {
        // The server picks the Application of this namespace (Argo's `appNamespace`).
        path: format!(
            "/api/v1/stream/applications?name={}&appNamespace={}",
            enc(&name),
            enc(&namespace)
        ),
        qualified: format!("{namespace}/{name}"),
        server,
        client,
        response: None,
        buf: Vec::new(),
        last: None,
        queue: VecDeque::new(),
        ended: false,
        opened_before: false,
    };
    futures::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(item) = st.queue.pop_front() {
                if matches!(item, Ok(None)) {
                    st.ended = true;
                    st.queue.clear();
                }
                return Some((item, st));
            }
            if st.ended {
                return None;
            }
            match st.response.as_mut() {
                None => {
                    if let Err(e) = open(&mut st).await {
                        return Some((Err(e), st));
                    }
                }
                Some(resp) => match resp.chunk().await {
                    Ok(Some(bytes)) => {
                        st.buf.extend_from_slice(&bytes);
                        lines(&mut st);
                    }
                    Ok(None) => {
                        tracing::debug!("the server's watch stream ended; opening it again");
                        st.response = None;
                    }
                    Err(e) => {
                        st.response = None;
                        return Some((
                            Err(anyhow::Error::new(e).context("reading the server's watch stream")),
                            st,
                        ));
                    }
                },
            }
        }
    })
    .boxed()
}

/// Opens the stream, then reads the Application as it is now.
async fn open(st: &mut State) -> Result<()> {
    if st.opened_before {
        tokio::time::sleep(REOPEN_AFTER).await;
    }
    st.opened_before = true;
    st.buf.clear();
    st.response = Some(st.server.stream(&st.path).await?);
    let current = st.client.get_opt(&st.qualified).await?;
    match current {
        Some(app) => pass(st, app),
        None => st.queue.push_back(Ok(None)),
    }
    Ok(())
}

/// Takes every complete line out of the buffer.
fn lines(st: &mut State) {
    while let Some(end) = st.buf.iter().position(|b| *b == b'\n') {
        let line: Vec<u8> = st.buf.drain(..=end).collect();
        event(st, &line);
    }
    if st.buf.len() > MAX_LINE {
        st.buf.clear();
        st.response = None;
        st.queue.push_back(Err(anyhow::anyhow!(
            "the server's watch stream sent a line over {MAX_LINE} bytes"
        )));
    }
}

/// One line of the stream: an event of the watched Application (the stream's `name` and
/// `appNamespace` filters pick it).
fn event(st: &mut State, line: &[u8]) {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    let text = text.strip_prefix("data:").map(str::trim).unwrap_or(text);
    if text.is_empty() {
        return;
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            st.queue.push_back(Err(anyhow::anyhow!(
                "the server's watch stream sent a line that is not JSON: {e}"
            )));
            return;
        }
    };
    if let Some(err) = value.get("error") {
        st.queue.push_back(Err(anyhow::anyhow!(
            "the server's watch stream: {}",
            err.as_str().map_or_else(|| err.to_string(), str::to_string)
        )));
        return;
    }
    let result = &value["result"];
    let app = &result["application"];
    if result["type"] == "DELETED" {
        st.queue.push_back(Ok(None));
        return;
    }
    match application(app.clone()) {
        Ok(app) => pass(st, app),
        Err(e) => st.queue.push_back(Err(e)),
    }
}

/// Queues `app` unless it is the version passed on last.
fn pass(st: &mut State, app: Application) {
    let rv = app
        .metadata
        .other
        .get("resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    // Versions are compared as numbers when both are (etcd's are): an event older than what
    // was passed on already (the stream's first ADDED after the read) is dropped.
    let stale = match (st.last.as_deref(), rv.parse::<u64>()) {
        (Some(last), Ok(new)) => last.parse::<u64>().is_ok_and(|old| new <= old) || last == rv,
        (Some(last), Err(_)) => last == rv && !rv.is_empty(),
        (None, _) => false,
    };
    if stale {
        return;
    }
    st.last = Some(rv);
    st.queue.push_back(Ok(Some(app)));
}

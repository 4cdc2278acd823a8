//! The gRPC service: tonic's unary framing around one generic call that decodes the request
//! with Argo's descriptor, answers it through the REST router and encodes the answer.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use prost_reflect::DynamicMessage;
use prost_reflect::bytes::{Buf, BufMut, Bytes};
use prost_reflect::prost::Message as _;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::{Code, Status};
use tower::ServiceExt as _;

use super::served::{SERVED, Served};
use super::{contract, json, transcode};
use crate::config::Limits;
use crate::error::GrpcCode;

/// The largest REST answer turned into a gRPC message.
const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;

/// The gRPC side of the listener.
#[derive(Clone)]
pub(crate) struct Bridge {
    rest: axum::Router,
    max_message_bytes: usize,
    /// The whole call, reading the request included (a stream that never sends ends here).
    timeout: Duration,
}

impl Bridge {
    pub(crate) fn new(rest: axum::Router, limits: &Limits) -> Self {
        Self {
            rest,
            max_message_bytes: limits.max_body_bytes,
            timeout: limits.request_timeout,
        }
    }
}

type BoxFuture =
    Pin<Box<dyn Future<Output = Result<Response<tonic::body::Body>, Infallible>> + Send>>;

impl tower::Service<Request<tonic::body::Body>> for Bridge {
    type Response = Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<tonic::body::Body>) -> Self::Future {
        let bridge = self.clone();
        Box::pin(async move { Ok(bridge.serve(req).await) })
    }
}

impl Bridge {
    async fn serve(self, req: Request<tonic::body::Body>) -> Response<tonic::body::Body> {
        let path = req.uri().path().to_string();
        let method = match find(&path) {
            Ok(found) => found,
            Err(status) => return status.into_http(),
        };
        let credentials = credentials(req.headers());
        let call = Call {
            rest: self.rest.clone(),
            served: method.0,
            method: method.1,
            credentials,
        };
        let mut grpc = tonic::server::Grpc::new(RawCodec)
            .max_decoding_message_size(self.max_message_bytes)
            .max_encoding_message_size(MAX_ANSWER_BYTES);
        let service = tower::service_fn(move |r: tonic::Request<Bytes>| call.clone().run(r));
        match tokio::time::timeout(self.timeout, grpc.unary(service, req)).await {
            Ok(response) => resource_exhausted(response),
            Err(_) => Status::deadline_exceeded(format!(
                "the call did not finish within the request timeout ({:?})",
                self.timeout
            ))
            .into_http(),
        }
    }
}

/// The served method and its contract, or `Unimplemented` in grpc-go's words.
fn find(path: &str) -> Result<(Served, contract::Method), Status> {
    let unknown = || {
        let (service, method) = path
            .strip_prefix('/')
            .and_then(|p| p.split_once('/'))
            .unwrap_or((path, ""));
        if SERVED
            .iter()
            .any(|s| s.path.starts_with(&format!("/{service}/")))
        {
            Status::unimplemented(format!("unknown method {method} for service {service}"))
        } else {
            Status::unimplemented(format!("unknown service {service}"))
        }
    };
    let served = SERVED.iter().find(|s| s.path == path).ok_or_else(unknown)?;
    match contract::method(path) {
        Ok(Some(method)) => Ok((*served, method)),
        Ok(None) => Err(unknown()),
        Err(e) => Err(Status::internal(e)),
    }
}

/// tonic names a too-large message `OutOfRange`; grpc-go (Argo's server) `ResourceExhausted`.
fn resource_exhausted(mut response: Response<tonic::body::Body>) -> Response<tonic::body::Body> {
    let out_of_range = HeaderValue::from(Code::OutOfRange as i32);
    if response.headers().get("grpc-status") == Some(&out_of_range) {
        response.headers_mut().insert(
            "grpc-status",
            HeaderValue::from(Code::ResourceExhausted as i32),
        );
    }
    response
}

/// The token as Argo's `getToken` reads gRPC metadata: `token` first, then `authorization:
/// Bearer`, then the cookie the gateway forwards as `grpcgateway-cookie`; as the REST request's
/// headers, so the REST authentication reads it.
fn credentials(headers: &HeaderMap) -> Vec<(header::HeaderName, HeaderValue)> {
    if let Some(token) = headers.get("token").and_then(|t| t.to_str().ok()) {
        let bearer = HeaderValue::from_str(&format!("Bearer {}", token.trim()));
        return bearer
            .map(|v| vec![(header::AUTHORIZATION, v)])
            .unwrap_or_default();
    }
    let bearer = headers
        .get_all(header::AUTHORIZATION)
        .iter()
        .find(|v| v.as_bytes().starts_with(b"Bearer "));
    if let Some(v) = bearer {
        return vec![(header::AUTHORIZATION, v.clone())];
    }
    headers
        .get_all("grpcgateway-cookie")
        .iter()
        .map(|v| (header::COOKIE, v.clone()))
        .collect()
}

/// One call's context.
#[derive(Clone)]
struct Call {
    rest: axum::Router,
    served: Served,
    method: contract::Method,
    credentials: Vec<(header::HeaderName, HeaderValue)>,
}

impl Call {
    async fn run(self, req: tonic::Request<Bytes>) -> Result<tonic::Response<Bytes>, Status> {
        let input =
            DynamicMessage::decode(self.method.input.clone(), req.into_inner()).map_err(|e| {
                Status::invalid_argument(format!("grpc: error unmarshalling request: {e}"))
            })?;
        let rest = transcode::rest(&self.served, json::to_json(&input))
            .map_err(Status::invalid_argument)?;
        let mut builder = Request::builder()
            .method(
                Method::from_bytes(self.served.verb.as_bytes())
                    .map_err(|e| Status::internal(e.to_string()))?,
            )
            .uri(&rest.uri)
            .header(header::ACCEPT, "application/json");
        for (name, value) in &self.credentials {
            builder = builder.header(name, value);
        }
        let body = match rest.body {
            Some(b) => {
                builder = builder.header(header::CONTENT_TYPE, "application/json");
                Body::from(b)
            }
            None => Body::empty(),
        };
        let request = builder
            .body(body)
            .map_err(|e| Status::internal(format!("building the request: {e}")))?;
        let response = match self.rest.oneshot(request).await {
            Ok(r) => r,
            Err(never) => match never {},
        };
        let output = answer(response).await?;
        let message = json::from_json(&self.method.output, &output)
            .map_err(|e| Status::internal(format!("answer of {}: {e}", self.served.path)))?;
        Ok(tonic::Response::new(Bytes::from(message.encode_to_vec())))
    }
}

/// The REST answer's JSON, or its error as the gRPC status Argo's server returns.
async fn answer(response: Response<Body>) -> Result<serde_json::Value, Status> {
    let status = response.status();
    let code = response.extensions().get::<GrpcCode>().copied();
    let body = axum::body::to_bytes(response.into_body(), MAX_ANSWER_BYTES)
        .await
        .map_err(|e| Status::resource_exhausted(format!("reading the answer: {e}")))?;
    if status.is_success() {
        if body.is_empty() {
            return Ok(serde_json::Value::Object(Default::default()));
        }
        return serde_json::from_slice(&body)
            .map_err(|e| Status::internal(format!("the answer is not JSON: {e}")));
    }
    let parsed: Option<serde_json::Value> = serde_json::from_slice(&body).ok();
    let message = parsed
        .as_ref()
        .and_then(|v| v.get("message").or_else(|| v.get("error")))
        .and_then(|m| m.as_str())
        .map(str::to_string)
        .unwrap_or_else(|| {
            String::from_utf8_lossy(&body[..body.len().min(1024)])
                .trim()
                .to_string()
        });
    let code = code
        .map(|GrpcCode(c)| Code::from_i32(c))
        .unwrap_or_else(|| code_of(status));
    Err(Status::new(code, message))
}

/// grpc-gateway's HTTP status for each code, inverted, for answers that carry no code (the
/// limits' refusals and the like).
fn code_of(status: StatusCode) -> Code {
    match status.as_u16() {
        400 | 415 => Code::InvalidArgument,
        401 => Code::Unauthenticated,
        403 => Code::PermissionDenied,
        404 => Code::NotFound,
        405 | 501 => Code::Unimplemented,
        408 | 504 => Code::DeadlineExceeded,
        409 => Code::Aborted,
        412 => Code::FailedPrecondition,
        413 | 429 => Code::ResourceExhausted,
        499 => Code::Cancelled,
        503 => Code::Unavailable,
        _ => Code::Unknown,
    }
}

/// Messages as bytes: decoding against the descriptor happens in [`Call::run`], where a
/// malformed message is `InvalidArgument`.
#[derive(Debug, Clone, Copy, Default)]
struct RawCodec;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawCodec;
    type Decoder = RawCodec;

    fn encoder(&mut self) -> Self::Encoder {
        RawCodec
    }

    fn decoder(&mut self) -> Self::Decoder {
        RawCodec
    }
}

impl Encoder for RawCodec {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

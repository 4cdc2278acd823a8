//! Argo CD's gRPC and gRPC-web API on the server's one port (issue #31): a request whose
//! content type is `application/grpc*` goes to [`bridge`], everything else to the REST router.
//!
//! There is one implementation behind both: a gRPC call is decoded with Argo's message
//! descriptors ([`contract`]), turned into the REST request Argo's own gateway would have made
//! for it (the method's `google.api.http` rule, [`transcode`]), and answered by the same router,
//! authentication middleware, RBAC checks, limits and metrics as a REST caller; the JSON answer
//! is encoded back with the same descriptors ([`json`]). Framing, status trailers and the
//! message size limit are tonic's; gRPC-web (binary and text) is tonic-web's translation.

mod bridge;
mod contract;
#[cfg(test)]
mod contract_test;
mod json;
mod served;
mod transcode;

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::http::{Request, Response, header};

pub(crate) use bridge::Bridge;
pub use served::{SERVED, Served};

/// Argo's descriptors of the served methods' messages (generated from Argo's .proto files by
/// the contract test, never edited by hand).
#[doc(hidden)]
pub fn contract_bytes() -> &'static [u8] {
    contract::BYTES
}

/// Whether a request is gRPC or gRPC-web (by content type, as argocd-server's switch does).
fn is_grpc<B>(req: &Request<B>) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/grpc"))
}

/// The listener's service: gRPC and gRPC-web to the bridge, everything else to REST.
#[derive(Clone)]
pub(crate) struct Front {
    rest: axum::Router,
    grpc: tonic_web::GrpcWebService<Bridge>,
}

impl Front {
    /// `app` is the whole REST router (with its layers); gRPC calls are answered through it.
    pub(crate) fn new(app: axum::Router, limits: &crate::config::Limits) -> Self {
        let bridge = Bridge::new(app.clone(), limits);
        Self {
            rest: app,
            grpc: tower::Layer::layer(&tonic_web::GrpcWebLayer::new(), bridge),
        }
    }
}

type BoxFuture = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

impl<B> tower::Service<Request<B>> for Front
where
    B: axum::body::HttpBody<Data = prost_reflect::bytes::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError> + std::fmt::Display,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        if is_grpc(&req) {
            let call = tower::Service::call(&mut self.grpc, req);
            Box::pin(async move { Ok(call.await?.map(Body::new)) })
        } else {
            let call = tower::Service::call(&mut self.rest, req.map(Body::new));
            Box::pin(call)
        }
    }
}

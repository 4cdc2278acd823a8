//! Argo's wire contract: the descriptors of the served methods' messages, generated from Argo's
//! own .proto files (server/*, v1alpha1, the k8s types they use) by the contract test
//! (`PLUMB_GRPC_WRITE_CONTRACT=1`), options stripped, only what the served methods reach.

use std::sync::LazyLock;

use prost_reflect::{DescriptorPool, MessageDescriptor};

/// The encoded `FileDescriptorSet`.
pub(crate) const BYTES: &[u8] = include_bytes!("argo.binpb");

static POOL: LazyLock<Result<DescriptorPool, String>> = LazyLock::new(|| {
    DescriptorPool::decode(BYTES).map_err(|e| format!("Argo's gRPC descriptors: {e}"))
});

/// A served method's request and response messages.
#[derive(Debug, Clone)]
pub(crate) struct Method {
    pub(crate) input: MessageDescriptor,
    pub(crate) output: MessageDescriptor,
}

/// The method at `/package.Service/Method`, if the contract has it.
pub(crate) fn method(path: &str) -> Result<Option<Method>, String> {
    let pool = POOL.as_ref().map_err(Clone::clone)?;
    let Some((service, name)) = path.strip_prefix('/').and_then(|p| p.split_once('/')) else {
        return Ok(None);
    };
    Ok(pool
        .get_service_by_name(service)
        .and_then(|s| s.methods().find(|m| m.name() == name))
        .map(|m| Method {
            input: m.input(),
            output: m.output(),
        }))
}

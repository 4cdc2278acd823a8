//! Reading an OCI image manifest and picking the one layer a source is made of.
//!
//! The rules follow Argo CD's OCI client (`util/oci/client.go`): at most 10 layers, exactly one
//! content layer (a tar, gzip-compressed or not) of an allowed media type, other layers
//! (provenance, attestations) ignored. A Helm chart is the layer
//! `application/vnd.cncf.helm.chart.content.v1.tar+gzip` (Helm 3.0's `application/tar+gzip` too).
//! A layer's declared size is checked against the download limit before a byte of it is asked
//! for, and its digest must be a sha256 digest (the only one Plumb verifies).

use serde_json::Value;

/// Helm's chart layer.
pub(crate) const HELM_CHART_LAYER: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
/// The chart layer media type of Helm 3.0–3.7 registries.
const HELM_LEGACY_LAYER: &str = "application/tar+gzip";
/// Argo CD's default `--oci-layer-media-types`.
const ARTIFACT_LAYERS: &[&str] = &[
    "application/vnd.oci.image.layer.v1.tar",
    "application/vnd.oci.image.layer.v1.tar+gzip",
    HELM_CHART_LAYER,
];
/// Argo CD's guard against absurd manifests.
const MAX_LAYERS: usize = 10;

/// Media types Plumb asks a registry for.
pub(crate) const ACCEPT: &str = "application/vnd.oci.image.manifest.v1+json, \
     application/vnd.docker.distribution.manifest.v2+json";

/// The layer to download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layer {
    pub(crate) media_type: String,
    /// `sha256:<64 hex>`.
    pub(crate) digest: String,
    pub(crate) size: u64,
}

impl Layer {
    /// Whether the layer is gzip-compressed.
    pub(crate) fn gzip(&self) -> bool {
        self.media_type.ends_with("tar+gzip")
    }

    /// Whether the layer is a Helm chart.
    pub(crate) fn is_chart(&self) -> bool {
        self.media_type == HELM_CHART_LAYER || self.media_type == HELM_LEGACY_LAYER
    }
}

/// The content layer of `body` (a manifest). `chart`: the source names a chart, so the layer
/// must be one. `max_bytes` bounds the declared size.
pub(crate) fn content_layer(body: &[u8], chart: bool, max_bytes: u64) -> Result<Layer, String> {
    let doc: Value =
        serde_json::from_slice(body).map_err(|e| format!("the manifest is not JSON: {e}"))?;
    let media = doc.get("mediaType").and_then(Value::as_str).unwrap_or("");
    if media.contains("image.index") || media.contains("manifest.list") {
        return Err(format!(
            "the manifest is an index ({media}) of several manifests, not one artifact"
        ));
    }
    if doc.get("schemaVersion").and_then(Value::as_u64) != Some(2) {
        return Err("the manifest's schemaVersion is not 2".into());
    }
    let layers = doc
        .get("layers")
        .and_then(Value::as_array)
        .ok_or("the manifest has no layers")?;
    if layers.len() > MAX_LAYERS {
        return Err(format!(
            "the manifest has {} layers, more than the {MAX_LAYERS} allowed",
            layers.len()
        ));
    }
    let mut found: Vec<Layer> = Vec::new();
    for (i, l) in layers.iter().enumerate() {
        let media_type = l.get("mediaType").and_then(Value::as_str).unwrap_or("");
        let content = media_type.ends_with("tar+gzip") || media_type.ends_with("tar");
        if !content {
            continue;
        }
        let allowed = if chart {
            media_type == HELM_CHART_LAYER || media_type == HELM_LEGACY_LAYER
        } else {
            ARTIFACT_LAYERS.contains(&media_type)
        };
        if !allowed {
            return Err(format!(
                "layer {i} has media type {media_type}, which is not {}",
                if chart {
                    format!("a Helm chart ({HELM_CHART_LAYER})")
                } else {
                    format!("one of {}", ARTIFACT_LAYERS.join(", "))
                }
            ));
        }
        let digest = l.get("digest").and_then(Value::as_str).unwrap_or("");
        let hex = digest.strip_prefix("sha256:").unwrap_or("");
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "layer {i} has digest {digest:?}, not a sha256 digest"
            ));
        }
        let size = l
            .get("size")
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("layer {i} has no size (or a negative one)"))?;
        if size > max_bytes {
            return Err(format!(
                "layer {i} declares {size} bytes, more than the download limit of {max_bytes} \
                 bytes; not downloaded"
            ));
        }
        found.push(Layer {
            media_type: media_type.to_owned(),
            digest: format!("sha256:{}", hex.to_ascii_lowercase()),
            size,
        });
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 if chart => Err(format!(
            "the manifest has no Helm chart layer ({HELM_CHART_LAYER})"
        )),
        n => Err(format!(
            "the manifest has {n} content layers; exactly one is expected"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(layers: &[(&str, &str, i64)]) -> Vec<u8> {
        let layers: Vec<Value> = layers
            .iter()
            .map(|(m, d, s)| serde_json::json!({"mediaType": m, "digest": d, "size": s}))
            .collect();
        serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.cncf.helm.config.v1+json",
                       "digest": format!("sha256:{}", "0".repeat(64)), "size": 2},
            "layers": layers,
        }))
        .unwrap()
    }

    #[test]
    fn a_chart_manifest_yields_its_chart_layer() {
        let d = format!("sha256:{}", "a".repeat(64));
        let l = content_layer(&manifest(&[(HELM_CHART_LAYER, &d, 900)]), true, 1000).unwrap();
        assert_eq!(
            (l.digest.as_str(), l.size, l.gzip(), l.is_chart()),
            (d.as_str(), 900, true, true)
        );
        // Provenance and other non-content layers are skipped.
        let l = content_layer(
            &manifest(&[
                ("application/vnd.cncf.helm.chart.provenance.v1.prov", &d, 10),
                (HELM_CHART_LAYER, &d, 10),
            ]),
            true,
            1000,
        )
        .unwrap();
        assert_eq!(l.media_type, HELM_CHART_LAYER);
        // An artifact may be a plain tar of manifests.
        let l = content_layer(
            &manifest(&[("application/vnd.oci.image.layer.v1.tar", &d, 10)]),
            false,
            1000,
        )
        .unwrap();
        assert!(!l.gzip() && !l.is_chart());
    }

    #[test]
    fn odd_manifests_are_refused_with_the_reason() {
        let d = format!("sha256:{}", "a".repeat(64));
        let refused = |body: Vec<u8>, chart: bool| content_layer(&body, chart, 1000).unwrap_err();
        assert!(
            refused(manifest(&[(HELM_CHART_LAYER, &d, 1001)]), true).contains("download limit")
        );
        assert!(refused(manifest(&[(HELM_CHART_LAYER, &d, -1)]), true).contains("no size"));
        assert!(
            refused(
                manifest(&[(HELM_CHART_LAYER, &format!("sha512:{}", "a".repeat(128)), 1)]),
                true
            )
            .contains("not a sha256")
        );
        assert!(
            refused(
                manifest(&[("application/vnd.oci.image.layer.v1.tar", &d, 1)]),
                true
            )
            .contains("not a Helm chart")
        );
        assert!(
            refused(
                manifest(&[(HELM_CHART_LAYER, &d, 1), (HELM_CHART_LAYER, &d, 1)]),
                true
            )
            .contains("exactly one")
        );
        assert!(refused(manifest(&[]), true).contains("no Helm chart layer"));
        let many: Vec<(&str, &str, i64)> = (0..11).map(|_| ("x/y", d.as_str(), 1)).collect();
        assert!(refused(manifest(&many), false).contains("11 layers"));
        assert!(refused(b"{".to_vec(), true).contains("not JSON"));
        let index = serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []
        }))
        .unwrap();
        assert!(refused(index, false).contains("index"));
    }
}

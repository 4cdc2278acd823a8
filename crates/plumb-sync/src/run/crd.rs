//! CRDs applied in a sync: established and served before anything after them is applied.

use super::*;

impl Run<'_, '_> {
    /// A CRD just applied is Established, and discovery knows its kind, before anything after
    /// it (its custom resources in the same wave, or later waves) is applied.
    pub(super) async fn wait_established(&mut self, crd: &ResourceKey) -> Result<(), String> {
        self.set_message(format!(
            "waiting for {} to be established",
            group_kind_name(crd)
        ));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        loop {
            let live = self
                .ctx
                .applier
                .get(crd)
                .await
                .map_err(|e| error_text(&e))?;
            let established = live
                .as_ref()
                .and_then(|l| l.pointer("/status/conditions"))
                .and_then(Value::as_array)
                .is_some_and(|cs| {
                    cs.iter().any(|c| {
                        c.get("type").and_then(Value::as_str) == Some("Established")
                            && c.get("status").and_then(Value::as_str) == Some("True")
                    })
                });
            if established {
                self.ctx
                    .applier
                    .discovery()
                    .refresh()
                    .await
                    .map_err(|e| error_text(&e))?;
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline || self.terminating() {
                return Err(format!(
                    "{} was not established within 120s",
                    group_kind_name(crd)
                ));
            }
            self.pause(Duration::from_millis(250)).await;
        }
    }
}

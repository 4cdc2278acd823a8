//! `plugin`: parameters from an HTTP plugin service (Argo's `PluginGenerator` and its
//! `getparams.execute` protocol). The ConfigMap in the control namespace holds `baseUrl`,
//! `token` (`$secret:key`, or `$key` of `argocd-secret`) and optionally `requestTimeout`
//! (seconds). The answer is hostile: bounded in time and size, parsed strictly.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use plumb_model::applicationset::{ApplicationSet, PluginGenerator};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::values::{Mode, append_values, flatten};
use crate::context::Context;
use crate::error::GeneratorError;
use crate::params::Params;

/// What Argo posts to the plugin.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Request<'a> {
    application_set_name: &'a str,
    input: Input<'a>,
}

#[derive(Serialize)]
struct Input<'a> {
    parameters: &'a Params,
}

/// What the plugin answers.
#[derive(Deserialize)]
struct Response {
    output: Output,
}

#[derive(Deserialize)]
struct Output {
    #[serde(default)]
    parameters: Vec<Params>,
}

/// The plugin's parameter sets, each with `generator.input.parameters` and `values` added.
pub async fn generate(
    spec: &PluginGenerator,
    set: &ApplicationSet,
    ctx: &Context,
) -> Result<Vec<Params>, GeneratorError> {
    let cm_name = spec
        .config_map_ref
        .as_ref()
        .and_then(|r| r.name.as_deref())
        .unwrap_or_default();
    let service = Service::from_config_map(cm_name, ctx).await?;
    let input: Params = spec
        .input
        .as_ref()
        .and_then(|i| i.parameters.as_ref())
        .map(|p| p.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let answer = service.call(set.name(), &input, ctx).await.map_err(|e| {
        GeneratorError::Source(format!(
            "error listing params: plugin {cm_name:?} ({}): {e}",
            service.base_url
        ))
    })?;
    if answer.len() > ctx.limits.max_params {
        return Err(GeneratorError::Limit(format!(
            "plugin {cm_name:?} answered {} parameter sets, more than the limit of {}",
            answer.len(),
            ctx.limits.max_params
        )));
    }
    let mode = Mode::of(set);
    let generator: Value = serde_json::json!({"input": {"parameters": input}});
    let mut out = Vec::with_capacity(answer.len());
    for object in answer {
        let mut params = if mode.go_template {
            object
        } else {
            flatten(&object)
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect()
        };
        params.insert("generator".into(), generator.clone());
        append_values(spec.values.as_ref(), &mut params, mode)?;
        out.push(params);
    }
    Ok(out)
}

struct Service {
    base_url: String,
    token: String,
    timeout: Option<Duration>,
}

impl Service {
    async fn from_config_map(name: &str, ctx: &Context) -> Result<Self, GeneratorError> {
        let what = || {
            format!(
                "plugin ConfigMap {name:?} in namespace {:?}",
                ctx.control_namespace
            )
        };
        let cm = Api::<ConfigMap>::namespaced(ctx.client.clone(), &ctx.control_namespace)
            .get(name)
            .await
            .map_err(|e| GeneratorError::Reference {
                what: what(),
                message: format!("error fetching ConfigMap: {e}"),
            })?;
        let data = cm.data.unwrap_or_default();
        let field = |k: &str| data.get(k).filter(|v| !v.is_empty()).cloned();
        let missing = |k: &str| GeneratorError::Reference {
            what: what(),
            message: format!("{k} not found in ConfigMap"),
        };
        let base_url = field("baseUrl").ok_or_else(|| missing("baseUrl"))?;
        let token_ref = field("token").ok_or_else(|| missing("token"))?;
        let Some(reference) = token_ref.strip_prefix('$') else {
            return Err(GeneratorError::Reference {
                what: what(),
                message: "error fetching Secret token: token does not reference a secret key starting with '$'".into(),
            });
        };
        let (secret, key) = reference
            .split_once(':')
            .unwrap_or(("argocd-secret", reference));
        let token = ctx
            .secret_value(&ctx.control_namespace, secret, key)
            .await?;
        let timeout = match field("requestTimeout") {
            None => None,
            Some(t) => Some(t.parse::<u64>().map(Duration::from_secs).map_err(|_| {
                GeneratorError::Reference {
                    what: what(),
                    message: format!("error set requestTimeout: {t:?} is not a number of seconds"),
                }
            })?),
        };
        Ok(Self {
            base_url,
            token,
            timeout,
        })
    }

    /// POST `<baseUrl>/api/v1/getparams.execute`, the whole exchange within the timeout (the
    /// ConfigMap's, at most `limits.http_timeout`) and the answer within `limits.max_file_bytes`.
    async fn call(
        &self,
        set_name: &str,
        input: &Params,
        ctx: &Context,
    ) -> Result<Vec<Params>, String> {
        let url = format!(
            "{}/api/v1/getparams.execute",
            self.base_url.trim_end_matches('/')
        );
        let limit = ctx.limits.http_timeout;
        let timeout = self
            .timeout
            .filter(|t| !t.is_zero())
            .map_or(limit, |t| t.min(limit));
        let body = Request {
            application_set_name: set_name,
            input: Input { parameters: input },
        };
        let max = ctx.limits.max_file_bytes;
        // The HTTP client has the same limit as the exchange: whichever fires, one message.
        let late = || format!("no answer within {} s", timeout.as_secs_f64());
        let failed = |what: &str, e: reqwest::Error| {
            if e.is_timeout() {
                late()
            } else {
                format!("{what}: {}", e.without_url())
            }
        };
        let exchange = async {
            let mut response = ctx
                .http
                .post(&url)
                .bearer_auth(&self.token)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(serde_json::to_vec(&body).map_err(|e| e.to_string())?)
                .send()
                .await
                .map_err(|e| failed("request failed", e))?;
            let status = response.status();
            let mut bytes = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|e| failed("reading the answer", e))?
            {
                bytes.extend_from_slice(&chunk);
                if bytes.len() as u64 > max {
                    return Err(format!("the answer is larger than {max} bytes"));
                }
            }
            if !status.is_success() {
                let text = String::from_utf8_lossy(&bytes[..bytes.len().min(512)]);
                // A plugin that echoes the request must not put its token into the condition.
                let text = redact(&text, &self.token);
                return Err(format!("the plugin answered {status}: {text}"));
            }
            let answer: Response = serde_json::from_slice(&bytes)
                .map_err(|e| format!("the answer is not a getparams.execute response: {e}"))?;
            Ok(answer.output.parameters)
        };
        tokio::time::timeout(timeout, exchange)
            .await
            .map_err(|_| late())?
    }
}

fn redact(text: &str, token: &str) -> String {
    let token = token.trim();
    if token.is_empty() {
        text.to_owned()
    } else {
        text.replace(token, "<token>")
    }
}

//! The OpenTelemetry side of [`super`]: the OTLP/HTTP exporter (protobuf
//! bodies, reqwest's blocking client, the SDK's batch processor with its
//! bounded queue), the run's root span and each component's span, kept
//! here by component name so that the engine's calls stay one line.

use super::ci;
use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceFlags, TraceId, TraceState,
    Tracer as _, TracerProvider as _,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider, SpanData, SpanExporter};
use opentelemetry_sdk::Resource;
use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

pub use opentelemetry::Value;

/// How long one export may take when `OTEL_EXPORTER_OTLP_TIMEOUT` (or
/// its traces variant) does not say: the run's end waits this long at
/// most for a collector that does not answer.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Everything a process that exports holds.
pub(super) struct Exporting {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    endpoint: String,
    timeout: Duration,
    /// The last export error, said once at the end of the run.
    error: Arc<Mutex<Option<String>>>,
    root: Mutex<Option<Context>>,
    components: Mutex<HashMap<String, Component>>,
}

struct Component {
    cx: Context,
    attempts: i64,
}

/// The process's exporter: one per process, since spans come from every
/// thread and are flushed when the process ends.
static EXPORTING: OnceLock<Option<Exporting>> = OnceLock::new();

/// The exporter, set up on first use from the environment; `None` when
/// the variables are unset (or traces are disabled).
pub(super) fn exporter() -> Option<&'static Exporting> {
    EXPORTING
        .get_or_init(|| setup(&|name| std::env::var(name).ok()))
        .as_ref()
}

/// The endpoint spans go to, when the environment names one.
pub fn endpoint(var: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
        || set("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim() == "none")
    {
        return None;
    }
    if let Some(traces) = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        return Some(traces);
    }
    let base = set("OTEL_EXPORTER_OTLP_ENDPOINT")?;
    Some(format!("{}/v1/traces", base.trim_end_matches('/')))
}

fn setup(var: &dyn Fn(&str) -> Option<String>) -> Option<Exporting> {
    let endpoint = endpoint(var)?;
    let timeout_set = [
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
        "OTEL_EXPORTER_OTLP_TIMEOUT",
    ]
    .iter()
    .find_map(|name| var(name)?.trim().parse::<u64>().ok());
    let timeout = timeout_set.map_or(DEFAULT_TIMEOUT, Duration::from_millis);
    // The builder reads the endpoint, the headers and the timeout from
    // the same variables; only the timeout's default is hub's own.
    let built = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_timeout(timeout)
        .build();
    let inner = match built {
        Ok(inner) => inner,
        Err(error) => {
            warn(&format!("traces are not exported to `{endpoint}`: {error}"));
            return None;
        }
    };
    let error = Arc::new(Mutex::new(None));
    let exporter = Watched {
        inner,
        error: error.clone(),
    };
    let named = var("OTEL_SERVICE_NAME").is_some_and(|v| !v.is_empty())
        || var("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|v| v.contains("service.name="));
    let resource = match named {
        true => Resource::builder().build(),
        false => Resource::builder().with_service_name("hub").build(),
    };
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build();
    let tracer = provider.tracer("hub");
    Some(Exporting {
        provider,
        tracer,
        endpoint,
        timeout,
        error,
        root: Mutex::new(None),
        components: Mutex::new(HashMap::new()),
    })
}

/// The OTLP exporter, which keeps its last error for the end of the run
/// (the SDK would only log it).
#[derive(Debug)]
struct Watched {
    inner: opentelemetry_otlp::SpanExporter,
    error: Arc<Mutex<Option<String>>>,
}

impl SpanExporter for Watched {
    fn export(
        &self,
        batch: Vec<SpanData>,
    ) -> impl std::future::Future<Output = OTelSdkResult> + Send {
        let batch = batch.into_iter().map(super::masked::span).collect();
        let exported = self.inner.export(batch);
        let error = self.error.clone();
        async move {
            let result = exported.await;
            if let Err(failure) = &result {
                *error.lock().unwrap_or_else(PoisonError::into_inner) = Some(failure.to_string());
            }
            result
        }
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// A started span, ended when dropped.
pub(crate) struct Live {
    cx: Context,
}

impl Live {
    pub(super) fn attr(&self, key: &'static str, value: Value) {
        self.cx.span().set_attribute(KeyValue::new(key, value));
    }

    pub(super) fn rename(&self, name: &str) {
        self.cx.span().update_name(name.to_string());
    }

    pub(super) fn fail(&self, message: &str) {
        self.cx
            .span()
            .set_status(Status::error(message.to_string()));
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.cx.span().end();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `TRACEPARENT` (W3C trace context, version 00) and `TRACESTATE` as the
/// remote parent of the run; `None` when unset or not well formed.
pub(crate) fn remote_parent(traceparent: &str, tracestate: Option<&str>) -> Option<SpanContext> {
    let parts: Vec<&str> = traceparent.trim().split('-').collect();
    let [version, trace, span, flags] = parts[..] else {
        return None;
    };
    let hex = |text: &str, len: usize| {
        text.len() == len && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    if !hex(version, 2) || version == "ff" || !hex(trace, 32) || !hex(span, 16) || !hex(flags, 2) {
        return None;
    }
    let trace_id = TraceId::from_hex(trace).ok()?;
    let span_id = SpanId::from_hex(span).ok()?;
    if trace_id == TraceId::INVALID || span_id == SpanId::INVALID {
        return None;
    }
    let flags = u8::from_str_radix(flags, 16).ok()?;
    let state = tracestate
        .and_then(|s| TraceState::from_str(s).ok())
        .unwrap_or_default();
    Some(SpanContext::new(
        trace_id,
        span_id,
        TraceFlags::new(flags & 1),
        true,
        state,
    ))
}

/// `TRACEPARENT` and `TRACESTATE` of `context`.
pub(crate) fn traceparent_of(context: &SpanContext) -> Vec<(String, String)> {
    let mut vars = vec![(
        "TRACEPARENT".to_string(),
        format!(
            "00-{}-{}-{:02x}",
            context.trace_id(),
            context.span_id(),
            context.trace_flags().to_u8()
        ),
    )];
    let state = context.trace_state().header();
    if !state.is_empty() {
        vars.push(("TRACESTATE".to_string(), state));
    }
    vars
}

pub(super) fn start_run(verb: &str, files: &str) -> Option<Live> {
    let exporting = exporter()?;
    let var = |name: &str| std::env::var(name).ok();
    let parent = match var("TRACEPARENT") {
        Some(traceparent) => match remote_parent(&traceparent, var("TRACESTATE").as_deref()) {
            Some(remote) => Context::new().with_remote_span_context(remote),
            None => {
                warn(&format!(
                    "TRACEPARENT `{traceparent}` is not a W3C trace context (00-TRACE-SPAN-FLAGS); the run starts a trace of its own"
                ));
                Context::new()
            }
        },
        None => Context::new(),
    };
    let mut attributes = vec![
        KeyValue::new("hub.verb", verb.to_string()),
        KeyValue::new("hub.files", files.to_string()),
    ];
    for (key, value) in ci::attributes(&var) {
        attributes.push(KeyValue::new(key, value));
    }
    let span = exporting
        .tracer
        .span_builder(format!("hub {verb}"))
        .with_kind(SpanKind::Internal)
        .with_attributes(attributes)
        .start_with_context(&exporting.tracer, &parent);
    let cx = parent.with_span(span);
    *lock(&exporting.root) = Some(cx.clone());
    Some(Live { cx })
}

pub(super) fn rename_run(name: &str, stack: &str) {
    let Some(exporting) = exporter() else { return };
    if let Some(root) = lock(&exporting.root).as_ref() {
        root.span().update_name(name.to_string());
        root.span()
            .set_attribute(KeyValue::new("hub.stack", stack.to_string()));
    }
}

/// Ends the root span, sends what is queued (waiting at most the export
/// timeout), prints the trace id and warns when an export failed.
pub(super) fn finish_run(root: Live) {
    let Some(exporting) = exporter() else { return };
    let trace_id = root.cx.span().span_context().trace_id();
    drop(root);
    *lock(&exporting.root) = None;
    lock(&exporting.components).clear();
    let shutdown = exporting
        .provider
        .shutdown_with_timeout(exporting.timeout + Duration::from_secs(1));
    let failure = lock(&exporting.error)
        .take()
        .or_else(|| shutdown.err().map(|e| e.to_string()));
    if let Some(failure) = failure {
        warn(&format!(
            "traces were not all exported to `{}`: {failure}",
            exporting.endpoint
        ));
    }
    hub_manifest::console::err_line(&format!("hub: trace id {trace_id}"));
}

/// A span below the component `parent`'s (when it has one) or the root.
pub(super) fn child(name: &str, parent: Option<&str>) -> Option<Live> {
    let exporting = exporter()?;
    let parent_cx = parent
        .and_then(|component| {
            lock(&exporting.components)
                .get(component)
                .map(|c| c.cx.clone())
        })
        .or_else(|| lock(&exporting.root).clone())?;
    let span = exporting
        .tracer
        .start_with_context(name.to_string(), &parent_cx);
    Some(Live {
        cx: parent_cx.with_span(span),
    })
}

pub(super) fn component_start(name: &str, action: Option<&str>) {
    let Some(exporting) = exporter() else { return };
    let Some(root) = lock(&exporting.root).clone() else {
        return;
    };
    let mut attributes = vec![KeyValue::new("hub.component", name.to_string())];
    if let Some(action) = action {
        attributes.push(KeyValue::new("hub.action", action.to_string()));
    }
    let span = exporting
        .tracer
        .span_builder(format!("component {name}"))
        .with_attributes(attributes)
        .start_with_context(&exporting.tracer, &root);
    let component = Component {
        cx: root.with_span(span),
        attempts: 0,
    };
    // A component seen again (a retry of its turn) keeps its first span.
    lock(&exporting.components)
        .entry(name.to_string())
        .or_insert(component);
}

pub(super) fn component_traceparent(name: &str) -> Option<Vec<(String, String)>> {
    let exporting = exporter()?;
    let components = lock(&exporting.components);
    let component = components.get(name)?;
    Some(traceparent_of(component.cx.span().span_context()))
}

pub(super) fn component_exit(name: &str, code: Option<i64>) {
    let Some(exporting) = exporter() else { return };
    let mut components = lock(&exporting.components);
    let Some(component) = components.get_mut(name) else {
        return;
    };
    component.attempts += 1;
    let span = component.cx.span();
    span.set_attribute(KeyValue::new("hub.attempt", component.attempts));
    let mut event = vec![KeyValue::new("hub.attempt", component.attempts)];
    if let Some(code) = code {
        span.set_attribute(KeyValue::new("process.exit.code", code));
        event.push(KeyValue::new("process.exit.code", code));
    }
    span.add_event("attempt ended", event);
}

pub(super) fn component_end(name: &str, outcome: &str, failure: Option<&str>) {
    let Some(exporting) = exporter() else { return };
    let Some(component) = lock(&exporting.components).remove(name) else {
        return;
    };
    let span = component.cx.span();
    span.set_attribute(KeyValue::new("hub.outcome", outcome.to_string()));
    match failure {
        Some(reason) => span.set_status(Status::error(reason.to_string())),
        None => span.set_status(Status::Ok),
    }
    span.end();
}

fn warn(message: &str) {
    hub_manifest::console::err_line(&format!("warning: {message}"));
}

use super::otel::{endpoint, remote_parent, traceparent_of};

fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    }
}

#[test]
fn the_endpoint_of_traces() {
    let base = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")];
    assert_eq!(
        endpoint(&vars(&base)).as_deref(),
        Some("http://collector:4318/v1/traces")
    );
    let both = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
        (
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://traces:4318/in",
        ),
    ];
    assert_eq!(
        endpoint(&vars(&both)).as_deref(),
        Some("http://traces:4318/in")
    );
    assert_eq!(endpoint(&vars(&[])), None);
    assert_eq!(
        endpoint(&vars(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "")])),
        None
    );
    let disabled = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
        ("OTEL_SDK_DISABLED", "true"),
    ];
    assert_eq!(endpoint(&vars(&disabled)), None);
    let none = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
        ("OTEL_TRACES_EXPORTER", "none"),
    ];
    assert_eq!(endpoint(&vars(&none)), None);
}

#[test]
fn a_traceparent_round_trips() {
    let text = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let parent = remote_parent(text, Some("vendor=abc,other=1")).expect("well formed");
    assert!(parent.is_remote() && parent.is_sampled());
    assert_eq!(
        traceparent_of(&parent),
        vec![
            ("TRACEPARENT".to_string(), text.to_string()),
            ("TRACESTATE".to_string(), "vendor=abc,other=1".to_string()),
        ]
    );
}

#[test]
fn a_malformed_traceparent_is_no_parent() {
    for text in [
        "",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
        "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "00-00000000000000000000000000000000-b7ad6b7169203331-01",
        "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
        "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-01",
    ] {
        assert!(remote_parent(text, None).is_none(), "{text:?}");
    }
}

#[test]
fn without_the_variables_a_span_is_empty() {
    // The test process has no OTLP variables: nothing is set up.
    if super::otel::endpoint(&|name| std::env::var(name).ok()).is_some() {
        return;
    }
    assert!(!super::enabled());
    let span = super::span("anything");
    assert!(span.0.is_none());
    let env = super::with_traceparent("a", vec![("X".into(), "1".into())]);
    assert_eq!(env, vec![("X".to_string(), "1".to_string())]);
}

//! Spans as exported: names, attributes, events and statuses pass
//! through the process's masker ([`hub_manifest::masked`]) on their way
//! to the collector, whatever code set them.

use opentelemetry::trace::Status;
use opentelemetry::{KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::SpanData;
use std::borrow::Cow;

/// `span` with every text masked.
pub(super) fn span(mut span: SpanData) -> SpanData {
    span.name = text(span.name);
    span.attributes = attributes(span.attributes);
    for event in &mut span.events.events {
        event.name = text(std::mem::take(&mut event.name));
        event.attributes = attributes(std::mem::take(&mut event.attributes));
    }
    if let Status::Error { description } = span.status {
        span.status = Status::Error {
            description: text(description),
        };
    }
    span
}

fn text(text: Cow<'static, str>) -> Cow<'static, str> {
    match hub_manifest::masked::text(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(masked) => Cow::Owned(masked),
    }
}

fn attributes(attributes: Vec<KeyValue>) -> Vec<KeyValue> {
    attributes
        .into_iter()
        .map(|KeyValue { key, value, .. }| {
            let value = match value {
                Value::String(s) => {
                    Value::String(StringValue::from(text(Cow::Owned(s.to_string()))))
                }
                Value::Array(opentelemetry::Array::String(list)) => {
                    Value::Array(opentelemetry::Array::String(
                        list.into_iter()
                            .map(|s| StringValue::from(text(Cow::Owned(s.to_string()))))
                            .collect(),
                    ))
                }
                other => other,
            };
            KeyValue::new(key, value)
        })
        .collect()
}

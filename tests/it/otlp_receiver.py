"""An OTLP/HTTP trace receiver for the trace tests (tests/it/traces.rs).

It decodes each POST to /v1/traces with the official OpenTelemetry protobuf
definitions (the `opentelemetry-proto` package) and appends one JSON object
per span to OUT, one a line, before it answers: the test reads OUT once hub
has ended. A body that does not decode is answered 400 and appended as
{"error": ...}.

Usage: otlp_receiver.py OUT
Prints "port N" once listening on 127.0.0.1 (a free port). Exits when its
standard input closes (the test that started it ended).
"""

import gzip
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

OUT = sys.argv[1]
LOCK = threading.Lock()


def value(any_value):
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: value(kv.value) for kv in any_value.kvlist_value.values}
    if kind == "bytes_value":
        return any_value.bytes_value.hex()
    return getattr(any_value, kind)


def attributes(pairs):
    return {kv.key: value(kv.value) for kv in pairs}


def spans(request):
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield {
                    "name": span.name,
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex(),
                    "trace_state": span.trace_state,
                    "kind": Span.SpanKind.Name(span.kind),
                    "start": span.start_time_unix_nano,
                    "end": span.end_time_unix_nano,
                    "attributes": attributes(span.attributes),
                    "events": [
                        {"name": e.name, "attributes": attributes(e.attributes)}
                        for e in span.events
                    ],
                    "status": {
                        "code": Status.StatusCode.Name(span.status.code),
                        "message": span.status.message,
                    },
                    "scope": scope_spans.scope.name,
                    "resource": resource,
                }


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            if self.path != "/v1/traces":
                raise ValueError(f"unexpected path {self.path}")
            if headers.get("content-type") != "application/x-protobuf":
                raise ValueError(f"unexpected content type {headers.get('content-type')}")
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            lines = [dict(span, headers=headers) for span in spans(request)]
            status, answer = 200, ExportTraceServiceResponse().SerializeToString()
        except Exception as error:  # noqa: BLE001 - any failure is the test's answer
            lines = [{"error": str(error)}]
            status, answer = 400, b""
        with LOCK, open(OUT, "a", encoding="utf-8") as out:
            for line in lines:
                out.write(json.dumps(line, sort_keys=True) + "\n")
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"port {server.server_address[1]}", flush=True)
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()

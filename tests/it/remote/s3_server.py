"""A local S3-compatible server for the remote-state tests: moto's S3 app.

Every request runs under one lock, so a conditional write's check and its
write are one atomic step, as on a real store (moto's threaded server checks
and writes in two steps, and two racing creates could both succeed).

Usage: s3_server.py DIR
Prints "port N" once listening on 127.0.0.1 (a free port). Appends
"METHOD PATH STATUS" per request to DIR/requests.log. While DIR/fail.BUCKET
exists every request to BUCKET gets 503: a store that is down, without
losing its content. Exits when its standard input closes (the test binary
that started it ended).
"""

import os
import sys
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import make_server


def main() -> None:
    folder = sys.argv[1]
    log_path = os.path.join(folder, "requests.log")
    app = DomainDispatcherApplication(create_backend_app)
    one_at_a_time = threading.Lock()

    def serialised(environ, start_response):
        method = environ.get("REQUEST_METHOD", "")
        path = environ.get("PATH_INFO", "")
        with one_at_a_time:
            bucket = path.lstrip("/").split("/", 1)[0]
            if bucket and os.path.exists(os.path.join(folder, "fail." + bucket)):
                start_response("503 Service Unavailable", [("Content-Length", "0")])
                status = "503"
                body = [b""]
            else:
                seen = []

                def remember(status_line, headers, exc_info=None):
                    seen.append(status_line.split(" ", 1)[0])
                    return start_response(status_line, headers, exc_info)

                body = list(app(environ, remember))
                status = seen[0] if seen else "?"
            with open(log_path, "a") as log:
                log.write(f"{method} {path} {status}\n")
            return body

    def exit_with_parent():
        sys.stdin.read()
        os._exit(0)

    threading.Thread(target=exit_with_parent, daemon=True).start()
    server = make_server("127.0.0.1", 0, serialised, threaded=True)
    print(f"port {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

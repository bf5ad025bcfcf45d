"""A local S3-compatible server for the remote-state tests: moto's S3 app.

Every request runs under one lock, so a conditional write's check and its
write are one atomic step, as on a real store (moto's threaded server checks
and writes in two steps, and two racing creates could both succeed).

Usage: s3_server.py DIR [--signed BUCKET]
Prints "port N" once listening on 127.0.0.1 (a free port).

With --signed, every request must be signed (AWS signature version 4) with
the keys of an IAM user the server creates, allowed everything; it prints
"keys ACCESS_KEY SECRET_KEY" and creates BUCKET. moto rebuilds the signed
request from a URL whose query it has already decoded, so it would refuse
valid signatures of queries holding an escaped character (`prefix=a%2Fb`):
the request it checks is given the query exactly as it came. Appends
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


def signed(bucket: str) -> tuple[str, str]:
    from moto import settings
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.iam.models import iam_backends
    from moto.s3.models import s3_backends

    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
    iam = iam_backends[DEFAULT_ACCOUNT_ID]["aws"]
    iam.create_user("us-east-1", "hub-test")
    everything = '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}'
    iam.put_user_policy("hub-test", "everything", everything)
    key = iam.create_access_key("hub-test")
    s3_backends[DEFAULT_ACCOUNT_ID]["aws"].create_bucket(bucket, "us-east-1")
    return key.access_key_id, key.secret_access_key


def checked_as_sent(current: dict) -> None:
    from moto.iam import access_control

    init = access_control.S3IAMRequest.__init__

    def with_raw_path(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self._path = current["uri"]

    access_control.S3IAMRequest.__init__ = with_raw_path


def main() -> None:
    folder = sys.argv[1]
    keys = None
    current = {}
    if sys.argv[2:3] == ["--signed"]:
        keys = signed(sys.argv[3])
        checked_as_sent(current)
    log_path = os.path.join(folder, "requests.log")
    app = DomainDispatcherApplication(create_backend_app)
    one_at_a_time = threading.Lock()

    def serialised(environ, start_response):
        method = environ.get("REQUEST_METHOD", "")
        path = environ.get("PATH_INFO", "")
        with one_at_a_time:
            current["uri"] = environ.get("RAW_URI", path)
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
    if keys:
        print(f"keys {keys[0]} {keys[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

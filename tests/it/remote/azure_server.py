"""Azurite's Blob service for the remote-state tests, on a free port of
127.0.0.1, in memory, without telemetry.

Usage: azure_server.py AZURITE_BLOB
Prints "port N" once Azurite listens. Azurite outlives the process that
started it, so this one stays beside it and stops it (SIGTERM, then SIGKILL)
when its standard input closes (the test binary that started it ended).
"""

import os
import re
import signal
import subprocess
import sys
import threading

LISTENING = re.compile(r"listens on http://127\.0\.0\.1:(\d+)")


def main() -> None:
    azurite = subprocess.Popen(
        [
            sys.argv[1],
            "--blobHost", "127.0.0.1",
            "--blobPort", "0",
            "--inMemoryPersistence",
            "--disableTelemetry",
            "--silent",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )

    def stop(*_):
        try:
            os.killpg(azurite.pid, signal.SIGTERM)
            azurite.wait(timeout=3)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(azurite.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os._exit(0)

    def stop_with_parent():
        sys.stdin.read()
        stop()

    threading.Thread(target=stop_with_parent, daemon=True).start()
    signal.signal(signal.SIGTERM, stop)
    for line in azurite.stdout:
        found = LISTENING.search(line)
        if found:
            print(f"port {found.group(1)}", flush=True)
            break
    else:
        sys.exit(f"azurite ended before listening (exit {azurite.wait()})")
    # Keeps reading so that Azurite never blocks on a full pipe.
    for _ in azurite.stdout:
        pass
    stop()


if __name__ == "__main__":
    main()

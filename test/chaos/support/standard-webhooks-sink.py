"""A destination written in Python on the official Standard Webhooks library (test/vendor/python, on PYTHONPATH).

    python3 standard-webhooks-sink.py <secret> <answer delay, seconds>

Listens on a free loopback port and prints {"port": ...}; then for each request, verifies it with the library,
waits the delay (a slow destination), answers 204 (400 when verification fails) and prints one JSON line:
{"id": <webhook-id>, "verified": true|false, "receivedAt": <ms since the epoch>, "error": ...}.
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook

secret, delay = sys.argv[1], float(sys.argv[2])
webhook = Webhook(secret)
lock = threading.Lock()


def report(line):
    with lock:
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        received_at = time.time() * 1000
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        line = {"id": self.headers.get("webhook-id"), "receivedAt": received_at}
        try:
            webhook.verify(body, dict(self.headers.items()))
            line["verified"] = True
        except Exception as error:  # noqa: BLE001 - any failure is a refused delivery, reported
            line["verified"] = False
            line["error"] = type(error).__name__ + ": " + str(error)
        time.sleep(delay)
        self.send_response(204 if line["verified"] else 400)
        self.end_headers()
        report(line)

    def log_message(self, format, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
report({"port": server.server_address[1]})
server.serve_forever()

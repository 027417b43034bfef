#!/usr/bin/env python3
"""Loopback stand-in for an OpenAI-compatible embeddings endpoint (test use only).

Serves POST /v1/embeddings (and GET /health) on 127.0.0.1 with deterministic
vectors derived from SHA-256 of the lower-cased word tokens of each input, so
texts sharing words land close together. Standard library only; it never
talks to the network beyond the loopback socket it listens on.

Usage: embedding-standin.py --port-file FILE [--dimension N]
The chosen port is written to FILE once the socket is listening.
"""

import argparse
import hashlib
import json
import math
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORD = re.compile(r"[0-9a-z]+")


def embed(text, dimension):
    vector = [0.0] * dimension
    words = WORD.findall(str(text).lower()) or [""]
    for word in words:
        digest = hashlib.sha256(word.encode("utf-8")).digest()
        for i in range(4):
            index = int.from_bytes(digest[i * 4 : i * 4 + 3], "big") % dimension
            sign = 1.0 if digest[i * 4 + 3] & 1 else -1.0
            vector[index] += sign
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


class Handler(BaseHTTPRequestHandler):
    dimension = 64

    def log_message(self, *args):
        pass

    def _send(self, code, payload):
        body = json.dumps(payload).encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.rstrip("/") in ("/health", "/v1/models"):
            self._send(200, {"status": "ok", "data": [{"id": "standin-embedding", "object": "model"}]})
        else:
            self._send(404, {"error": {"message": "not found"}})

    def do_POST(self):
        if not self.path.rstrip("/").endswith("/embeddings"):
            self._send(404, {"error": {"message": "not found"}})
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
            request = json.loads(self.rfile.read(length) or b"{}")
        except (ValueError, OSError):
            self._send(400, {"error": {"message": "invalid JSON body"}})
            return
        inputs = request.get("input", "")
        if isinstance(inputs, str) or (inputs and isinstance(inputs[0], int)):
            inputs = [inputs]
        dimension = int(request.get("dimensions") or self.dimension)
        data = [
            {"object": "embedding", "index": i, "embedding": embed(text, dimension)}
            for i, text in enumerate(inputs)
        ]
        tokens = sum(len(WORD.findall(str(t).lower())) for t in inputs)
        self._send(
            200,
            {
                "object": "list",
                "data": data,
                "model": request.get("model") or "standin-embedding",
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--dimension", type=int, default=64)
    args = parser.parse_args()
    Handler.dimension = args.dimension
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(args.port_file + ".tmp", "w", encoding="utf-8") as handle:
        handle.write(str(server.server_address[1]))
    import os

    os.replace(args.port_file + ".tmp", args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Minimal Warden client: frame = 6 hex digits (payload byte length) + UTF-8 JSON.

    WARDEN_TOKEN=wdn_... python3 examples/client.py '{"target":"shell","action":"run","payload":{"command":"ls"}}'
"""
import json, os, socket, sys


class Warden:
    def __init__(self, addr="127.0.0.1:9105", token=None):
        host, port = addr.rsplit(":", 1)
        self.sock = socket.create_connection((host.strip("[]"), int(port)), timeout=30)
        self.next_id = 0
        hello = self.recv()  # the server speaks first
        assert hello["payload"]["action"] == "handshake", hello
        if token:
            self.call("auth", token=token)

    def send(self, message):
        data = json.dumps(message).encode()
        self.sock.sendall(b"%06x" % len(data) + data)

    def recv(self):
        length = int(self._read(6), 16)
        return json.loads(self._read(length))

    def _read(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("connection closed by the daemon")
            buf += chunk
        return buf

    def call(self, action, **fields):
        self.next_id += 1
        self.send({"type": "request", "id": str(self.next_id), "payload": {"action": action, **fields}})
        reply = self.recv()["payload"]
        if not reply["ok"]:
            raise RuntimeError("%(code)s: %(message)s" % reply["error"])
        return reply


if __name__ == "__main__":
    w = Warden(os.environ.get("WARDEN_ADDR", "127.0.0.1:9105"), os.environ.get("WARDEN_TOKEN"))
    decision = w.call("decide", proposal=json.loads(sys.argv[1]))["decision"]
    print(json.dumps(decision))
    sys.exit({"approve": 0, "reject": 1, "approval-required": 3}[decision["outcome"]])

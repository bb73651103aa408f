#!/usr/bin/env python3
"""The machine's own floor for a request/response over loopback: a trivial echo server in a
second process, 3000 sequential 100-byte round trips, TCP_NODELAY on both ends. Compare
bench_load's latencies with this: no daemon can answer faster than the OS wakes processes.

    python3 bench/loopback_floor.py
"""
import multiprocessing, socket, time


def serve(srv):
    conn, _ = srv.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while True:
        data = conn.recv(65536)
        if not data:
            return
        conn.sendall(data)


if __name__ == "__main__":
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    child = multiprocessing.Process(target=serve, args=(srv,))
    child.start()
    s = socket.create_connection(srv.getsockname())
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    lat = []
    for _ in range(3000):
        t = time.perf_counter()
        s.sendall(b"x" * 100)
        s.recv(65536)
        lat.append((time.perf_counter() - t) * 1e6)
    lat.sort()
    print("loopback echo round trip, µs: p50 %.0f  p90 %.0f  p99 %.0f  p99.9 %.0f"
          % (lat[1500], lat[2700], lat[2970], lat[2997]))
    s.close()
    child.terminate()

#!/usr/bin/env python3
"""A stranger on the nodes' network: no node of the spec, no key.

Runs until killed, against the chief's supervisor port (which the sync
relay uses too), and records under OUT what came back to it:
  - hello racer: plain-text hellos naming each worker, a stop and a failed
    rank's report, again and again (supervision.bin: every byte answered);
  - relay asker: asks for every manifest entry (relay.bin);
  - flood: 64 MiB without a newline, once (flood.txt: how much the chief
    took before it cut the connection).

  stranger.py OUT HOST PORT WORKER [WORKER...]
"""
import socket
import sys
import threading
import time

out, host, port, workers = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
lock = threading.Lock()


def record(name, data):
    with lock, open(f"{out}/{name}", "ab") as f:
        f.write(data)


def connect():
    s = socket.create_connection((host, port), timeout=2)
    s.settimeout(2)
    return s


def drain(s, name):
    try:
        while True:
            data = s.recv(65536)
            if not data:
                return
            record(name, data)
    except OSError:
        return


def forever(body):
    def run():
        while True:
            try:
                body()
            except OSError:
                pass
            time.sleep(0.02)
    threading.Thread(target=run, daemon=True).start()


def hellos():
    s = connect()
    lies = "".join(
        f'{{"t":"hello","node":"{w}"}}\n{{"t":"stop"}}\n'
        f'{{"t":"ended","gen":0,"statuses":{{"1":3}},"failed":{{"1":3}}}}\n'
        for w in workers)
    s.sendall(lies.encode())
    drain(s, "supervision.bin")
    s.close()


def relay():
    s = connect()
    s.sendall((" ".join(str(i) for i in range(5000)) + "\n").encode())
    drain(s, "relay.bin")
    s.close()


def flood():
    while True:
        try:
            s = connect()
            break
        except OSError:
            time.sleep(0.05)
    sent = 0
    chunk = b"x" * (1 << 20)
    try:
        while sent < 64 << 20:
            s.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass
    with open(f"{out}/flood.txt", "w") as f:
        f.write(str(sent))


forever(hellos)
forever(relay)
threading.Thread(target=flood, daemon=True).start()
with open(f"{out}/started", "w") as f:
    f.write("yes")
while True:
    time.sleep(60)

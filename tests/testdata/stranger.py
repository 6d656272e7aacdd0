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

Or, as an impostor at the address the workers take for the chief's: it
listens on each PORT (the job's and the supervisor's) and offers every comer, unasked, a relay's greeting and a
tampered agent (a script that leaves /tmp/impostor-agent-ran where it
runs), recording what they sent (impostor.bin):

  stranger.py OUT --impostor PORT [PORT...]
"""
import socket
import sys
import threading
import time

out, host, port, workers = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
if host == "--impostor":
    ports = [port] + [int(p) for p in workers]
lock = threading.Lock()
TAMPERED_AGENT = b"#!/bin/sh\ntouch /tmp/impostor-agent-ran\nexec sleep 1000\n"


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


def impostor(port):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", port))
    listener.listen(64)
    offer = (b"FPRELAY3\n" + f"{len(TAMPERED_AGENT)} 0 755 .fleetplan/bin/fleetplan-agent\n".encode()
             + TAMPERED_AGENT)

    def serve(s):
        s.settimeout(5)
        try:
            s.sendall(offer)
            drain(s, "impostor.bin")
        except OSError:
            pass
        s.close()

    def accept():
        while True:
            s, _ = listener.accept()
            threading.Thread(target=serve, args=(s,), daemon=True).start()
    threading.Thread(target=accept, daemon=True).start()


if host == "--impostor":
    for each in ports:
        impostor(each)
else:
    forever(hellos)
    forever(relay)
    threading.Thread(target=flood, daemon=True).start()
with open(f"{out}/started", "w") as f:
    f.write("yes")
while True:
    time.sleep(60)

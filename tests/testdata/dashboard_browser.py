#!/usr/bin/env python3
"""Drives headless chromium through the DevTools protocol over
--remote-debugging-pipe (fd 3: commands in, fd 4: events and answers out,
each message JSON ended by a NUL byte), for the dashboard's end-to-end test.

    dashboard_browser.py CHROMIUM URL

Loads URL, waits until the page shows the job's nodes, a curve with
points and node b's rank 1 in the log view, prints that DOM, then clicks the stop button and the confirmation's
button with real mouse events, waits for the page to say how the stop went,
and prints the DOM again. Output: one JSON object {"before", "after",
"error"} on stdout. Exits 1 when a wait timed out (the object says which)."""

import json
import os
import subprocess
import sys
import tempfile
import time

WAIT_S = 60


class Browser:
    def __init__(self, chromium, profile):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def fds():
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-pipe", "--no-first-run", "--disable-extensions",
             "--user-data-dir=" + profile, "about:blank"],
            pass_fds=(3, 4), preexec_fn=fds,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buffer = b""
        self.next_id = 0
        self.session = None

    def send(self, method, params=None, session=True):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            answer = self.read()
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})

    def read(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_chrome, 65536)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def open(self, url):
        targets = self.send("Target.getTargets", session=False)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": page["targetId"], "flatten": True},
                                 session=False)["sessionId"]
        self.send("Page.enable")
        self.send("Page.navigate", {"url": url})

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate",
                           {"expression": expression, "returnByValue": True})
        return result.get("result", {}).get("value")

    def wait_for(self, expression):
        deadline = time.time() + WAIT_S
        while time.time() < deadline:
            try:
                if self.evaluate(expression):
                    return True
            except RuntimeError:  # the page is still loading
                pass
            time.sleep(0.25)
        return False

    def click(self, selector):
        """A left click at the middle of the element, as a user's."""
        box = self.evaluate(
            "(() => { const r = document.querySelector(%s).getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()" % json.dumps(selector))
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent",
                      {"type": kind, "x": box[0], "y": box[1], "button": "left",
                       "clickCount": 1})

    def dom(self):
        return self.evaluate("document.documentElement.outerHTML")

    def close(self):
        try:
            self.send("Browser.close", session=False)
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


SHOWS_JOB = ("document.querySelectorAll('#nodes td.node').length > 0 && "
             "[...document.querySelectorAll('#loss-chart polyline')]"
             ".some(p => p.getAttribute('points').trim().split(/\\s+/).length >= 3) && "
             "document.getElementById('logs').textContent.includes('[b/1] ')")
CONFIRMING = "!document.getElementById('confirm').hidden"
STOPPED = "/^(stopped|not stopped)/.test(document.getElementById('stop-result').textContent)"


def main():
    chromium, url = sys.argv[1], sys.argv[2]
    out = {"before": "", "after": "", "error": ""}
    with tempfile.TemporaryDirectory() as profile:
        browser = Browser(chromium, profile)
        try:
            browser.open(url)
            if not browser.wait_for(SHOWS_JOB):
                out["error"] = "the page did not show the nodes and a curve"
            out["before"] = browser.dom()
            if not out["error"]:
                browser.click("#stop")
                if not browser.wait_for(CONFIRMING):
                    out["error"] = "no confirmation after the stop button"
            if not out["error"]:
                browser.click("#confirm-stop")
                if not browser.wait_for(STOPPED):
                    out["error"] = "the page did not say how the stop went"
                out["after"] = browser.dom()
        except Exception as error:  # the test prints it
            out["error"] = f"{type(error).__name__}: {error}"
        finally:
            browser.close()
    print(json.dumps(out))
    return 1 if out["error"] else 0


if __name__ == "__main__":
    sys.exit(main())

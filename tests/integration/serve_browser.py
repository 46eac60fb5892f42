#!/usr/bin/env python3
"""Headless Chromium against a running `twinbench serve`, driven over the
DevTools protocol (python3-websocket): every page given loads with no
console error, no uncaught exception and no failed load, and fits a 1280 px
window without sideways scrolling; then it signs in through the login form
and acknowledges the alert given through that alert's form, and reads back
the state the page shows. tests/integration/serve_test.cpp runs it against
the server it started and checks the store. With --via-tls-proxy the browser
reaches the server through an HTTPS proxy on loopback (tls_proxy.py: a
self-signed certificate, which this browser is told to accept), as behind a
site's TLS-terminating proxy, and the result says whether the session cookie
it was given is Secure.

    serve_browser.py --url URL --token-env VAR --alert ID --out DIR
                     [--screenshots DIR] [--via-tls-proxy] --pages PATH...

Writes DIR/result.json: {"pages": [{"url", "status", "errors", "scroll_width",
"client_width", "overflowing"}],
"acknowledged_state_shown": ..., "session_cookie_secure": ..., "proxy_connections": ...}. With --screenshots, a full-page PNG of each
page at 1280 px (named after the page kind). Exit 0 when it could drive the
browser (the checks are the caller's), 1 otherwise.
"""
import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket  # Debian's python3-websocket (ci/setup.sh)

WIDTH = 1280


class Browser:
    def __init__(self, profile, accept_self_signed=False):
        self.proc = subprocess.Popen(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--no-first-run", "--disable-component-update", "--disable-sync", "--remote-debugging-port=0",
             "--remote-allow-origins=*", f"--user-data-dir={profile}", f"--window-size={WIDTH},900"] +
            (["--ignore-certificate-errors"] if accept_self_signed else []) + ["about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(profile, "DevToolsActivePort")
        for _ in range(300):
            if os.path.exists(port_file) and open(port_file).read().count("\n") >= 1:
                break
            time.sleep(0.1)
        port = open(port_file).read().split("\n")[0]
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
        page = next(t for t in targets if t["type"] == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=60)
        self.next_id = 0
        self.events = []
        for method in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable"):
            self.call(method)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": WIDTH, "height": 900, "deviceScaleFactor": 1, "mobile": False})

    def call(self, method, params=None):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params or {}}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == my_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def wait_for(self, method, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for e in self.events:
                if e["method"] == method and not e.get("seen"):
                    e["seen"] = True
                    return e
            self.ws.settimeout(max(0.1, deadline - time.time()))
            message = json.loads(self.ws.recv())
            if "method" in message:
                self.events.append(message)
        raise RuntimeError(f"no {method} within {timeout} s")

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def load(self, url, action=None):
        """Navigates to `url` (or runs `action`, which navigates); the document's status and the errors seen."""
        self.events.clear()
        if action is None:
            self.call("Page.navigate", {"url": url})
        else:
            self.evaluate(action)
        self.wait_for("Page.loadEventFired")
        time.sleep(0.3)  # late console messages
        self.drain()
        status, errors = None, []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Network.responseReceived" and p.get("type") == "Document":
                status = p["response"]["status"]
            elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errors.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
            elif e["method"] == "Runtime.exceptionThrown":
                errors.append("exception: " + p["exceptionDetails"].get("text", ""))
            elif e["method"] == "Log.entryAdded" and p["entry"]["level"] == "error":
                errors.append(f"log: {p['entry'].get('text', '')} {p['entry'].get('url', '')}")
            elif e["method"] == "Network.loadingFailed" and not p.get("canceled"):
                errors.append(f"load failed: {p.get('errorText')}")
        return status, errors

    def drain(self):
        self.ws.settimeout(0.05)
        try:
            while True:
                message = json.loads(self.ws.recv())
                if "method" in message:
                    self.events.append(message)
        except websocket.WebSocketTimeoutException:
            pass
        self.ws.settimeout(60)

    def screenshot(self, path):
        metrics = self.call("Page.getLayoutMetrics")
        height = int(metrics.get("cssContentSize", metrics.get("contentSize"))["height"])
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": WIDTH, "height": max(900, height), "deviceScaleFactor": 1, "mobile": False})
        shot = self.call("Page.captureScreenshot", {"format": "png"})
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": WIDTH, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))

    def close(self):
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            self.proc.wait(10)


def kind_of(path):
    """'index', 'series', 'pair', ...: a page's kind, for a screenshot's name."""
    first = path.strip("/").split("/")[0].split("?")[0]
    return first or "index"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--token-env", required=True, help="the variable holding the write token (never on a command line)")
    ap.add_argument("--alert", required=True, type=int)
    ap.add_argument("--out", required=True)
    ap.add_argument("--screenshots")
    ap.add_argument("--via-tls-proxy", action="store_true", help="through an HTTPS proxy on loopback (tls_proxy.py)")
    ap.add_argument("--pages", nargs="+", required=True)
    a = ap.parse_args()
    token = os.environ[a.token_env]
    base = a.url.rstrip("/")
    os.makedirs(a.out, exist_ok=True)
    profile = tempfile.mkdtemp(prefix="serve-browser-")
    proxy = None
    if a.via_tls_proxy:
        from tls_proxy import TlsProxy
        proxy = TlsProxy(int(base.rsplit(":", 1)[1]), profile)
        base = f"https://127.0.0.1:{proxy.port}"
    browser = Browser(profile, accept_self_signed=proxy is not None)
    result = {"pages": [], "base": base}
    try:
        for path in a.pages:
            status, errors = browser.load(base + path)
            layout = browser.evaluate(
                "({scroll_width: document.documentElement.scrollWidth,"
                " client_width: document.documentElement.clientWidth,"
                " overflowing: [...document.querySelectorAll('.table-wrap, pre')]"
                "   .filter(e => e.scrollWidth > e.clientWidth + 1 && e.getClientRects().length)"
                "   .map(e => (e.innerText || '').slice(0, 80))})")
            result["pages"].append({"url": path, "status": status, "errors": errors, **layout})
            if a.screenshots:
                os.makedirs(a.screenshots, exist_ok=True)
                browser.screenshot(os.path.join(a.screenshots, f"serve-{kind_of(path)}.png"))
        # Sign in, then the alert's form: its state, a note, submit.
        browser.load(base + "/login")
        browser.load(None, "document.querySelector('input[name=token]').value = " + json.dumps(token) +
                     "; document.querySelector('form').submit()")
        browser.load(base + f"/alerts/{a.alert}")
        status, errors = browser.load(
            None, "document.querySelector('select[name=state]').value = 'acknowledged';"
                  "document.querySelector('input[name=note]').value = 'seen in the browser test';"
                  "document.querySelector('form button[type=submit]').click()")
        result["acknowledge_status"] = status
        result["acknowledge_errors"] = errors
        result["acknowledged_state_shown"] = browser.evaluate(
            "document.querySelector('#alert .badge').textContent")
        cookies = browser.call("Network.getCookies", {"urls": [base + "/"]}).get("cookies", [])
        session = [c for c in cookies if c["name"] == "twinbench_session"]
        result["session_cookie_secure"] = session[0]["secure"] if session else None
        if proxy:
            result["proxy_connections"] = proxy.connections
    finally:
        browser.close()
        if proxy:
            proxy.close()
        shutil.rmtree(profile, ignore_errors=True)
    with open(os.path.join(a.out, "result.json"), "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Drives Debian's headless Chromium through the DevTools protocol over a pipe
(--remote-debugging-pipe: JSON messages separated by NUL bytes on file descriptors 3 and 4), with
nothing but the Python standard library: no npm, no websocket client, no Playwright. Used by
tests/html/check_html.py; also a small PNG reader to look at the screenshots it takes."""
import base64
import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import time
import zlib


class CdpError(Exception):
    pass


class Browser:
    """One headless Chromium with one page (tab) attached in flat mode."""

    def __init__(self, binary, width=1400, height=900):
        self.profile = tempfile.mkdtemp(prefix="scalea-html-chrome-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def child_fds():  # Chromium reads commands on fd 3 and writes replies on fd 4
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)  # above 4, whatever the pipes got
            os.dup2(a, 3)  # dup2 makes them inheritable
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
             "--remote-debugging-pipe", f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=child_fds, close_fds=False)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._id = 0
        self.events = []
        self.session = None
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(domain + ".enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)
        # No scrollbar: a screenshot beyond the viewport would drop it and lay the page out wider
        # than the clip measured before.
        self.call("Emulation.setScrollbarsHidden", hidden=True)

    # --- transport -----------------------------------------------------------------------------
    def _send(self, msg):
        data = json.dumps(msg).encode() + b"\0"
        while data:
            n = os.write(self._to_chrome, data)
            data = data[n:]

    def _read(self, timeout):
        end = time.time() + timeout
        while b"\0" not in self._buf:
            left = end - time.time()
            if left <= 0:
                raise CdpError("Chromium did not answer in time")
            ready, _, _ = select.select([self._from_chrome], [], [], left)
            if ready:
                chunk = os.read(self._from_chrome, 1 << 20)
                if not chunk:
                    raise CdpError("Chromium closed the pipe")
                self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, timeout=60, **params):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        self._send(msg)
        while True:
            m = self._read(timeout)
            if m.get("id") == self._id:
                if "error" in m:
                    raise CdpError(f"{method}: {m['error']}")
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def wait_event(self, method, timeout=60):
        for i, e in enumerate(self.events):
            if e["method"] == method:
                return self.events.pop(i)
        end = time.time() + timeout
        while time.time() < end:
            m = self._read(end - time.time())
            if m.get("method") == method:
                return m
            if "method" in m:
                self.events.append(m)
        raise CdpError(f"no {method} within {timeout} s")

    # --- page helpers --------------------------------------------------------------------------
    def navigate(self, url, timeout=60):
        """Loads url; returns the seconds from the request to the load event."""
        self.events = [e for e in self.events if e["method"] != "Page.loadEventFired"]
        start = time.time()
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired", timeout)
        return time.time() - start

    def js(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise CdpError(f"{expression[:80]}...: {r['exceptionDetails'].get('exception', {}).get('description', r['exceptionDetails'])}")
        return r["result"].get("value")

    def errors(self):
        """Console errors, uncaught exceptions and failed loads seen so far."""
        out = []
        for e in self.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append("exception: " + p["exceptionDetails"].get("exception", {}).get(
                    "description", p["exceptionDetails"].get("text", "")))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.error: " + " ".join(str(a.get("value", a.get("description", "")))
                                                        for a in p.get("args", [])))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append("log: " + p["entry"].get("text", ""))
        return out

    def requests(self):
        """URLs the page asked for (Network.requestWillBeSent)."""
        return [e["params"]["request"]["url"] for e in self.events
                if e["method"] == "Network.requestWillBeSent"]

    def center(self, selector):
        r = self.js(f"""(function(){{var e=document.querySelector({json.dumps(selector)});
            if(!e) return null; e.scrollIntoView({{block:'center'}}); var b=e.getBoundingClientRect();
            return [b.left+Math.min(b.width/2,40), b.top+b.height/2];}})()""")
        if r is None:
            raise CdpError(f"no element {selector}")
        return r

    def click(self, selector):
        """A real mouse click (pressed and released) in the middle of the element."""
        x, y = self.center(selector)
        self.mouse(x, y)

    def mouse(self, x, y, move_only=False):
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        if move_only:
            return
        for t in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=t, x=x, y=y, button="left", clickCount=1)

    def key(self, key, code=None, text=None):
        vk = {"ArrowDown": 40, "ArrowUp": 38, "ArrowLeft": 37, "ArrowRight": 39, "Enter": 13,
              "Escape": 27, "Home": 36, "End": 35}.get(key, 0)
        down = {"type": "keyDown" if text is None else "keyDown", "key": key, "code": code or key,
                "windowsVirtualKeyCode": vk}
        if text is not None:
            down["text"] = text
        self.call("Input.dispatchKeyEvent", **down)
        self.call("Input.dispatchKeyEvent", type="keyUp", key=key, code=code or key, windowsVirtualKeyCode=vk)

    def type_text(self, text):
        self.call("Input.insertText", text=text)

    def screenshot(self, path, selector=None, scale=1.0, full=False):
        params = {"format": "png"}
        if selector:
            b = self.js(f"""(function(){{var e=document.querySelector({json.dumps(selector)});
                e.scrollIntoView({{block:'start'}}); var b=e.getBoundingClientRect();
                return [b.left+window.scrollX,b.top+window.scrollY,b.width,b.height];}})()""")
            params["clip"] = {"x": b[0], "y": b[1], "width": b[2], "height": b[3], "scale": scale}
            params["captureBeyondViewport"] = True
        elif full:
            h = self.js("document.documentElement.scrollHeight")
            w = self.js("document.documentElement.clientWidth")
            params["clip"] = {"x": 0, "y": 0, "width": w, "height": h, "scale": scale}
            params["captureBeyondViewport"] = True
        elif scale != 1.0:  # the viewport as it is scrolled
            x, y, w, h = self.js("[window.scrollX, window.scrollY, document.documentElement.clientWidth, window.innerHeight]")
            params["clip"] = {"x": x, "y": y, "width": w, "height": h, "scale": scale}
        data = base64.b64decode(self.call("Page.captureScreenshot", **params)["data"])
        with open(path, "wb") as f:
            f.write(data)
        return data

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except (CdpError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)


def png_pixels(data):
    """Decodes an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes): (width, height,
    rows of bytes, bytes per pixel)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour})")
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, rows, bpp


def ink(data, background=(255, 255, 255), tolerance=12):
    """Share of the pixels of a PNG that differ from the background colour, and how many distinct
    colours (quantized to 4 bits per channel) it holds."""
    w, h, rows, bpp = png_pixels(data)
    differ, colours = 0, set()
    for line in rows:
        for i in range(0, len(line), bpp):
            r, g, b = line[i], line[i + 1], line[i + 2]
            if abs(r - background[0]) > tolerance or abs(g - background[1]) > tolerance or \
                    abs(b - background[2]) > tolerance:
                differ += 1
            colours.add((r >> 4, g >> 4, b >> 4))
    return differ / float(w * h), len(colours)

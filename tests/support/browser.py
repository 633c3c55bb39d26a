"""How the browser tests run Debian's Chromium, and the two screens they look through."""

from __future__ import annotations

import os

CHROMIUM = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Phone: a small touch screen; desktop: a laptop window.
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True}
DESKTOP = {"viewport": {"width": 1280, "height": 860}, "device_scale_factor": 1, "is_mobile": False}

"""A headless Chromium driven by Selenium: the shopper's real browser.

Debian's ``chromium`` and ``chromium-driver`` are used as installed (``scripts/setup.sh``);
Selenium is given the driver's path, so Selenium Manager never downloads anything. Pitfalls
handled here (found with Debian's Chromium 156 and Selenium 4.51; ``benchmarks/webshop_latency.py`` times it):

- ``--window-size`` leaves a smaller viewport; the CDP ``Emulation.setDeviceMetricsOverride``
  sets it exactly, so a screenshot is exactly ``image_size``. The window itself is never smaller
  than :data:`_MIN_WINDOW`: Chromium 156 headless, in a window under about 170 px, hangs in most
  ``Page.captureScreenshot`` calls (4 browsers in 6 at 128x128, none at 170 or over);
- a click does not wait for the next page: :meth:`Browser.click` waits until a new document at
  the expected URL has loaded, with its fonts (the URL alone is not enough: a link may reload the
  page already shown);
- partial raster is off: it made the same page's rounded corners differ by one level between
  runs, so a seed did not give the same bytes;
- every browser gets its own profile folder; the processes whose command line names it (and the
  driver's process tree) are killed on ``close()``, so a crashed or killed driver leaves no
  Chromium behind;
- the driver starts in its own process group, which Chromium's whole tree stays in, watched by
  :mod:`rl4vlm_gym.processes`: if the process holding the env dies (SIGKILL, SIGTERM, Ray) the
  group is killed and the profile deleted; SIGTERM kills them before the process exits.
"""

from __future__ import annotations

import base64
import contextlib
import io
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import psutil
from PIL import Image

from rl4vlm_gym import processes

if TYPE_CHECKING:
    from numpy.typing import NDArray
    from selenium.webdriver.remote.webdriver import WebDriver

__all__ = ["Browser", "BrowserError", "find_chromium"]

_FLAGS = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-extensions",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
    "--disable-default-apps", "--mute-audio", "--hide-scrollbars", "--force-color-profile=srgb",
    "--font-render-hinting=none", "--disable-features=Translate,MediaRouter,OptimizationHints",
    # Partial raster redraws only a tile's invalidated rect into a reused tile: a rounded corner
    # across that rect's edge then differs by one level, so the same page gave other bytes in 4
    # rollouts of 33 (none in 30 without it).
    "--disable-partial-raster",
)  # fmt: skip
# One round trip per poll: the document's state, and once it is complete, its fonts loaded and not
# the page being left, its images decoded (so that the next frame, the screenshot, draws them)
# before the answer comes back. Python decides whether ``href`` is the page expected; an arrived
# page that is not is only decoded for nothing. Each driver command is a round trip of tens of ms
# on a loaded machine: the check once took one command and the decoding another.
_READY_JS = (
    "const done = arguments[arguments.length - 1];"
    "const fonts = document.fonts ? document.fonts.status : 'loaded';"
    "const seen = [document.readyState, fonts, location.href, !!window.rl4vlmLeft];"
    "if (seen[0] !== 'complete' || seen[1] !== 'loaded' || seen[3]) { done(seen); } else {"
    " Promise.all(Array.from(document.images, (image) => image.decode().catch(() => null)))"
    " .then(() => done(seen)); }"
)
# Marks the page being left: a link to the page already shown (an option already chosen) reloads
# the same URL, and until the new document replaces the marked one the old one looks arrived.
# The element to click comes back from the same script (one round trip, not two).
_LEAVE_JS = "window.rl4vlmLeft = true;"
_LEAVE_AND_FIND_JS = _LEAVE_JS + "return document.getElementById(arguments[0]);"
_SET_QUERY_JS = (
    "const box = document.getElementById('search-input'); box.value = arguments[0]; box.blur();"
    "return document.getElementById('search-button');"
)
_MIN_WINDOW = (600, 800)  # (height, width): see the module docstring
_TIMEOUT = 20.0
_SHM, _SHM_ROOM = "/dev/shm", 512 * 2**20  # Docker's default /dev/shm is 64 MB: then the temp folder
COMMAND_TIMEOUT = 60.0
"""Seconds any one driver command may take (Selenium's default for Chromium is 120 s): past it the
command raises, and the env restarts the browser. Screenshots hung in CDP in windows under ~170 px
(see :data:`_MIN_WINDOW`); 30 s was too short for an honest command on 2 cores loaded by a parallel
test suite (twice in one run)."""


class BrowserError(RuntimeError):
    """The browser could not be started or did not do what it was asked; ``fatal`` when retrying
    cannot help (Chromium is not installed)."""

    def __init__(self, message: str, fatal: bool = False) -> None:
        super().__init__(message)
        self.fatal = fatal


def find_chromium() -> tuple[str, str]:
    """Paths of the Chromium binary and its driver (``$CHROMIUM`` / ``$CHROMEDRIVER`` win)."""
    binary = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    driver = os.environ.get("CHROMEDRIVER") or shutil.which("chromedriver")
    if not binary or not driver:
        raise BrowserError(
            "renderer='browser' needs Chromium and its driver (Debian: apt-get install chromium chromium-driver, "
            "or run scripts/setup.sh webshop); set $CHROMIUM and $CHROMEDRIVER to use others. "
            f"Found chromium={binary!r}, chromedriver={driver!r}",
            fatal=True,
        )
    return binary, driver


def _owned_service(driver: str, profile: str) -> Any:
    """A chromedriver ``Service`` whose process group (and ``profile``) die with this process."""
    from selenium.webdriver.chrome.service import Service

    class OwnedService(Service):
        owned: processes.Owned | None = None

        # Selenium's hook between Popen and the wait for the port: registering here, before Chromium
        # starts, leaves no window in which a killed owner leaks a browser.
        def _start_process(self, path: str) -> None:
            super()._start_process(path)
            self.owned = processes.own(group=self.process.pid, paths=[profile])
            processes.close_on_sigterm(self.owned)

    return OwnedService(driver, log_output=subprocess.DEVNULL, popen_kw={"start_new_session": True})


class Browser:
    """One headless Chromium with a viewport of exactly ``size`` = (height, width) pixels."""

    def __init__(self, size: tuple[int, int]) -> None:
        from selenium import webdriver

        os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium Manager go online
        binary, driver = find_chromium()
        self.size = size
        self.arrived_at: str | None = None
        """The URL of the page the last ``open``/``click``/``search`` arrived at, ``None`` while one is
        under way or failed: only these move the browser, so the env knows where it is without asking."""
        self.profile = tempfile.mkdtemp(prefix="rl4vlm-webshop-chromium-", dir=_profile_parent())
        options = webdriver.ChromeOptions()
        options.binary_location = binary
        window = (max(size[0], _MIN_WINDOW[0]), max(size[1], _MIN_WINDOW[1]))
        for flag in (*_FLAGS, f"--user-data-dir={self.profile}", f"--window-size={window[1]},{window[0]}"):
            options.add_argument(flag)
        self._service = _owned_service(driver, self.profile)
        try:
            self._driver = webdriver.Chrome(service=self._service, options=options)
        except Exception as err:
            self._kill_leftovers()
            raise BrowserError(f"Chromium did not start ({binary}, {driver}): {err}") from err
        _command_timeout(self._driver, COMMAND_TIMEOUT)  # a hung browser raises, never hangs us
        self._driver.set_page_load_timeout(_TIMEOUT)
        self._driver.set_script_timeout(_TIMEOUT)
        self._driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": size[1], "height": size[0], "deviceScaleFactor": 1, "mobile": False},
        )

    # -- pages ------------------------------------------------------------------------------------

    def open(self, url: str) -> None:
        """Load ``url`` and wait until it is shown."""
        self.arrived_at = None
        self._driver.get(url)
        self._wait(lambda href: href == url)

    def click(self, element_id: str, arrived: Callable[[str], bool]) -> None:
        """Click the element ``element_id`` and wait for a page whose URL satisfies ``arrived``."""
        from selenium.common.exceptions import NoSuchElementException

        self.arrived_at = None  # until the wait ends, the page shown is not known
        element = self._driver.execute_script(_LEAVE_AND_FIND_JS, element_id)
        if element is None:  # as find_element would say
            raise NoSuchElementException(f"no element with id {element_id!r} on {self.url}")
        element.click()  # a real click (mouse events at the element), not a script's
        self._wait(arrived)

    def search(self, query: str, arrived: Callable[[str], bool]) -> None:
        """Write ``query`` in the search box, press Search and wait for the results page."""
        self.arrived_at = None
        # The value is set by script, not typed: typing 10 kB key by key takes seconds.
        self._driver.execute_script(_LEAVE_JS + _SET_QUERY_JS, query).click()
        self._wait(arrived)

    def screenshot(self) -> NDArray[np.uint8]:
        """The viewport as ``uint8[H, W, 3]``."""
        shot = self._driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})
        image = Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")
        if image.size != (self.size[1], self.size[0]):
            raise BrowserError(f"screenshot is {image.size[0]}x{image.size[1]}, expected {self.size[1]}x{self.size[0]}")
        return np.asarray(image, dtype=np.uint8).copy()

    @property
    def url(self) -> str:
        """The URL shown, asked of the browser (a round trip; see ``arrived_at``)."""
        return str(self._driver.current_url)

    def _wait(self, arrived: Callable[[str], bool]) -> None:
        from selenium.common.exceptions import JavascriptException
        from selenium.webdriver.support.wait import WebDriverWait

        def ready(driver: Any) -> str | None:
            try:
                state, fonts, href, left = driver.execute_async_script(_READY_JS)
            except JavascriptException as err:
                if "unloaded" in str(err):  # the poll met the page being replaced: not arrived yet
                    return None
                raise
            return href if state == "complete" and fonts == "loaded" and arrived(href) and not left else None

        try:
            self.arrived_at = WebDriverWait(self._driver, _TIMEOUT, poll_frequency=0.002).until(ready)
        except Exception as err:
            raise BrowserError(f"the page did not arrive within {_TIMEOUT:.0f} s (at {self.url})") from err

    # -- processes --------------------------------------------------------------------------------

    def processes(self) -> list[psutil.Process]:
        """This browser's live processes: the driver, Chromium and its helpers."""
        found: dict[int, psutil.Process] = {}
        driver = self._service.process
        if driver is not None and driver.poll() is None:
            with contextlib.suppress(psutil.Error):
                root = psutil.Process(driver.pid)
                for proc in (root, *root.children(recursive=True)):
                    found[proc.pid] = proc
        for proc in psutil.process_iter(["cmdline"]):
            with contextlib.suppress(psutil.Error):
                if any(self.profile in arg for arg in proc.info["cmdline"] or ()):
                    found[proc.pid] = proc
        return list(found.values())

    def driver_running(self) -> bool:
        """Whether the driver's process runs (asked of the OS, not of the driver: no round trip)."""
        driver = self._service.process
        return driver is not None and driver.poll() is None

    def alive(self) -> bool:
        """Whether the driver answers and Chromium still has a page."""
        if not self.driver_running():
            return False
        try:
            self._driver.execute_script("return 1")
        except Exception:  # noqa: BLE001 - any failure means the browser is gone
            return False
        return True

    def close(self) -> None:
        """Kill Chromium and its driver (and any leftover process), delete the profile."""
        # Killed, not asked to quit: nothing of theirs is kept (the profile goes), and quitting took
        # 0.2-0.3 s a browser (a hung one: a ping's timeout, then the kill anyway).
        self._kill(self.processes())
        with contextlib.suppress(Exception):
            self._service.stop()  # Selenium's side of the driver (its process is gone: no request)
        self._kill_leftovers()

    def _kill_leftovers(self) -> None:
        self._kill(self.processes())
        if self._service.owned is not None:
            self._service.owned.close()  # the group, in case a process escaped the scan; then the profile
        shutil.rmtree(self.profile, ignore_errors=True)

    @staticmethod
    def _kill(processes: list[psutil.Process]) -> None:
        for proc in processes:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        # Until each is gone or a zombie (dead, its memory freed), 5 s at most. Not psutil.wait_procs:
        # it waits for zombies to be reaped, and Chromium's are reaped by PID 1 (reparented once the
        # driver dies), which in containers can take seconds; our own child, the driver, is reaped here.
        deadline = time.monotonic() + 5
        while (processes := [proc for proc in processes if not _dead(proc)]) and time.monotonic() < deadline:
            time.sleep(0.005)


def _profile_parent() -> str | None:
    """Where profiles go: ``/dev/shm`` (memory) when it has room, else the temp folder. A profile is a
    few MB written at start and deleted at close; on a disk that discards deleted blocks (ours) the
    deletion took 0.4 s a browser, in memory it takes milliseconds."""
    with contextlib.suppress(OSError):
        if os.access(_SHM, os.W_OK) and shutil.disk_usage(_SHM).free >= _SHM_ROOM:
            return _SHM
    return None


def _command_timeout(driver: WebDriver, seconds: float) -> None:
    """Bound each WebDriver command of ``driver`` to ``seconds`` (its client's timeout)."""
    executor = driver.command_executor  # Selenium types it a URL or a RemoteConnection; Chrome's is the latter
    if isinstance(executor, str):
        raise TypeError(f"the WebDriver has no RemoteConnection: {executor!r}")
    executor.client_config.timeout = seconds


def _dead(proc: psutil.Process) -> bool:
    try:
        proc.wait(timeout=0)  # reaps it if it is our child
        return True
    except psutil.TimeoutExpired:
        try:
            return proc.status() == psutil.STATUS_ZOMBIE
        except psutil.Error:
            return True
    except psutil.Error:
        return True

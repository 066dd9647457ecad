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
  page already shown). The click itself is the mouse pressed and released at the element through
  CDP, after our own script made chromedriver's checks (in view, displayed, not covered): its element
  click took 60 ms more a step, mostly waiting for the navigation that our wait waits for again;
- partial raster is off: it made the same page's rounded corners differ by one level between
  runs, so a seed did not give the same bytes;
- every browser gets its own profile folder; the processes whose command line names it (and the
  driver's process tree) are killed on ``close()``, so a crashed or killed driver leaves no
  Chromium behind;
- the driver starts in its own process group, which Chromium's whole tree stays in, watched by
  :mod:`rl4vlm_gym.processes`: if the process holding the env dies (SIGKILL, SIGTERM, Ray) the
  group is killed and the profile deleted; SIGTERM kills them before the process exits;
- starting Chromium and its driver takes 2-3 s (the session, then a first command that waits for
  the first tab), so the envs of one process share one Chromium, each :class:`Browser` in a window
  of its own (its own viewport, page and history; each env serves its pages from its own port).
  A closed window is blanked and kept (up to :data:`_SPARE_WINDOWS`) for the next :class:`Browser`,
  resized if need be: opening one took 0.25 s, and a kit run makes dozens of envs one after another.
  The shared Chromium outlives its last window by :data:`SHARED_IDLE_S` seconds, for the next env
  (a test suite, a kit run); a forked child starts its own (the Chromium is the parent's). A
  command that fails marks the whole Chromium broken: closing any of its windows then kills it,
  and every env on it restarts its own at its page. ``Browser(size, shared=False)`` gets a
  Chromium of its own, killed by ``close()``.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from rl4vlm_gym.extras import require

require("webshop", "WebShop's browser renderer (rl4vlm/WebShop-Browser-v2)")  # before importing it: an error naming the extra

import psutil
from PIL import Image

from rl4vlm_gym import processes

if TYPE_CHECKING:
    from collections.abc import Iterator

    from numpy.typing import NDArray
    from selenium.webdriver.remote.webdriver import WebDriver

__all__ = ["SHARED_IDLE_S", "Browser", "BrowserError", "close_shared", "find_chromium"]

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
_LEAVE_JS = "window.rl4vlmLeft = true;"
# A function of an element: where to click it, as chromedriver's element click finds it (scrolled into
# view if it is not, the centre of its first box within the viewport, a point that no other element
# covers), or a string saying why it cannot be clicked. When it can, the page is marked left in the
# same round trip as the search for the element.
_LOCATE_AND_LEAVE = (
    "function (element) {"
    "if (!element) { return 'no such element'; }"
    "let box = element.getClientRects()[0];"
    "if (!box || box.width <= 0 || box.height <= 0) { return 'the element has no box (not displayed)'; }"
    "if (box.top < 0 || box.left < 0 || box.bottom > innerHeight || box.right > innerWidth) {"
    " element.scrollIntoView({block: 'end', inline: 'nearest'}); box = element.getClientRects()[0]; }"
    "const x = (Math.max(box.left, 0) + Math.min(box.right, innerWidth)) / 2;"
    "const y = (Math.max(box.top, 0) + Math.min(box.bottom, innerHeight)) / 2;"
    "const hit = document.elementFromPoint(x, y);"
    "if (!hit || !(hit === element || element.contains(hit))) {"
    " return 'covered at (' + x + ', ' + y + ') by ' + (hit ? hit.outerHTML.slice(0, 80) : 'nothing'); }"
    + _LEAVE_JS
    + "return [x, y]; }"
)
# Expressions for CDP's Runtime.evaluate (see _evaluate), their argument a JSON literal: chromedriver's
# execute_script took 18-25 ms of CPU (its checks, then a wrapped call), Runtime.evaluate 5-6 ms. They
# run on a page already arrived at, so chromedriver's wait for pending navigations has nothing to wait for.
_FIND_JS = "({locate})(document.getElementById({element_id}))"
_SET_QUERY_JS = (
    "(() => {{ const input = document.getElementById('search-input'); input.value = {query}; input.blur();"
    " return ({locate})(document.getElementById('search-button')); }})()"
)
_MIN_WINDOW = (600, 800)  # (height, width): see the module docstring
_TIMEOUT = 20.0
_POLL_TIMEOUT = 2.0
"""Seconds one readiness poll (:data:`_READY_JS`) may take. A document replaced while the poll's script
runs sometimes never answers it (and chromedriver does not always report it unloaded): the poll then
ends at this bound and the wait polls again, until ``_TIMEOUT``."""
_SHM, _SHM_ROOM = "/dev/shm", 512 * 2**20  # Docker's default /dev/shm is 64 MB: then the temp folder
COMMAND_TIMEOUT = 60.0
"""Seconds any one driver command may take (Selenium's default for Chromium is 120 s): past it the
command raises, and the env restarts the browser. Screenshots hung in CDP in windows under ~170 px
(see :data:`_MIN_WINDOW`); 30 s was too short for an honest command on 2 cores loaded by a parallel
test suite (twice in one run)."""
_SPARE_WINDOWS = 4
"""Closed windows a shared Chromium keeps, blank, for the next envs of the process (a kit run makes
dozens one after another): opening a window took 0.25 s (3 commands), taking a kept one a switch."""
SHARED_IDLE_S = 60.0
"""Seconds the process's shared Chromium outlives its last window (0: killed with it), so that envs
made one after another (a test suite, the conformance kit) do not each start one."""


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


class _Chromium:
    """One Chromium and its driver, in a profile of their own, with the windows of the :class:`Browser`\\ s on it.

    Its first window is kept as a spare for the first :class:`Browser` (sized when taken): opening another
    window for it, and so another renderer, took 0.8 s of CPU a start. The session always keeps a window
    open (closing its last one would end it): a window is closed only with a full spare list or before a kill."""

    def __init__(self) -> None:
        from selenium import webdriver

        os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium Manager go online
        binary, driver = find_chromium()
        self.pid = os.getpid()
        self.lock = threading.RLock()  # one command sequence at a time: the driver has one current window
        self.windows: set[str] = set()
        self.spare: dict[str, tuple[int, int]] = {}  # closed windows kept for the next (handle: viewport)
        self.current: str | None = None  # the window the driver's commands go to
        self.broken = False
        self.closed = False
        self._idle: threading.Timer | None = None
        self.profile = tempfile.mkdtemp(prefix="rl4vlm-webshop-chromium-", dir=_profile_parent())
        options = webdriver.ChromeOptions()
        options.binary_location = binary
        for flag in (*_FLAGS, f"--user-data-dir={self.profile}", f"--window-size={_MIN_WINDOW[1]},{_MIN_WINDOW[0]}"):
            options.add_argument(flag)
        self.service = _owned_service(driver, self.profile)
        try:
            self.driver = webdriver.Chrome(service=self.service, options=options)
            _command_timeout(self.driver, COMMAND_TIMEOUT)  # a hung browser raises, never hangs us
            self.driver.set_page_load_timeout(_TIMEOUT)
            self.driver.set_script_timeout(_POLL_TIMEOUT)
            self.current = str(self.driver.current_window_handle)
            self.spare[self.current] = (0, 0)  # blank, and sized by whichever Browser takes it
        except Exception as err:
            self.kill()
            raise BrowserError(f"Chromium did not start ({binary}, {driver}): {err}") from err

    def usable(self) -> bool:
        """Whether new windows may open here: this process's, not broken or closed, its driver running."""
        return self.pid == os.getpid() and not self.broken and not self.closed and self.driver_running()

    def driver_running(self) -> bool:
        driver = self.service.process
        return driver is not None and driver.poll() is None

    def open_window(self, size: tuple[int, int]) -> str:
        """A new window whose viewport is exactly ``size`` = (height, width); its handle."""
        with self.lock:
            if self._idle is not None:
                self._idle.cancel()
                self._idle = None
            if self.spare:  # a window an env closed: a fresh one took 3 commands and 0.25 s
                handle = next((h for h, shown in self.spare.items() if shown == size), next(iter(self.spare)))
                shown = self.spare.pop(handle)
                self._switch(handle)
                self.windows.add(handle)
                if shown != size:
                    self._size(size)
                return handle
            if self.current is None:  # a closed window: the driver opens none from there
                self._switch(next(iter(self.windows)))  # no spare: every open window is a Browser's
            self.driver.switch_to.new_window("window")
            handle = str(self.driver.current_window_handle)
            self.current = handle
            self.windows.add(handle)
            self._size(size)
            return handle

    def _size(self, size: tuple[int, int]) -> None:
        window = (max(size[0], _MIN_WINDOW[0]), max(size[1], _MIN_WINDOW[1]))
        self.driver.set_window_size(window[1], window[0])
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": size[1], "height": size[0], "deviceScaleFactor": 1, "mobile": False},
        )

    @contextlib.contextmanager
    def window(self, handle: str) -> Iterator[WebDriver]:
        """The driver, its commands going to window ``handle``, for this thread alone; a command that
        fails marks the Chromium broken."""
        with self.lock:
            if self.closed or handle not in self.windows:
                raise BrowserError("this browser window was closed")
            try:
                self._switch(handle)
                yield self.driver
            except BaseException:
                self.broken = True
                raise

    def _switch(self, handle: str) -> None:
        if self.current != handle:
            self.current = None  # unknown until the switch succeeds
            self.driver.switch_to.window(handle)
            self.current = handle

    def close_window(self, handle: str, idle_s: float, size: tuple[int, int] | None = None) -> None:
        """Close window ``handle``; the last one's close kills the Chromium after ``idle_s`` seconds
        (at once if it is broken). With its viewport ``size``, the window is blanked and kept for the next
        :meth:`open_window` (up to :data:`_SPARE_WINDOWS`) instead of closed."""
        if self.pid != os.getpid():
            return  # a forked child's copy: the window is the parent's
        with self.lock:
            if self.closed or handle not in self.windows:
                return
            self.windows.discard(handle)
            if not self.broken:
                try:
                    self._switch(handle)
                    if size is not None and len(self.spare) < _SPARE_WINDOWS and (self.windows or idle_s > 0):
                        # Blank, so that nothing of the old page (its scripts, its requests to a server
                        # about to close) reaches the next env, whose first command opens its own page.
                        self.driver.get("about:blank")
                        self.spare[handle] = size
                    else:
                        self.driver.close()
                        self.current = None
                except Exception:  # noqa: BLE001 - a window that cannot close: the Chromium is broken
                    self.broken = True
            if self.broken or (not self.windows and idle_s <= 0):
                self.kill()
            elif not self.windows:
                self._idle = threading.Timer(idle_s, self._kill_if_idle)
                self._idle.daemon = True
                self._idle.start()

    def _kill_if_idle(self) -> None:
        with self.lock:
            if not self.windows and threading.current_thread() is self._idle:
                self.kill()

    def processes(self) -> list[psutil.Process]:
        """The live processes: the driver, Chromium and its helpers."""
        found: dict[int, psutil.Process] = {}
        driver = self.service.process
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

    def kill(self) -> None:
        """Kill Chromium and its driver (and any leftover process), delete the profile; only in the
        process that started them (a forked child's copy leaves the parent's alone)."""
        if self.pid != os.getpid():
            return
        with self.lock:
            self.closed = True
            self.windows.clear()
            self.spare.clear()
            if self._idle is not None:
                self._idle.cancel()
                self._idle = None
            # Killed, not asked to quit: nothing of theirs is kept (the profile goes), and quitting took
            # 0.2-0.3 s a browser (a hung one: a ping's timeout, then the kill anyway).
            _kill(self.processes())
            with contextlib.suppress(Exception):
                self.service.stop()  # Selenium's side of the driver (its process is gone: no request)
            _kill(self.processes())
            if self.service.owned is not None:
                self.service.owned.close()  # the group, in case a process escaped the scan; then the profile
            shutil.rmtree(self.profile, ignore_errors=True)


_shared: _Chromium | None = None
_shared_lock = threading.Lock()


def _shared_chromium() -> _Chromium:
    """This process's shared Chromium, started if there is none (or it broke, or was the parent's)."""
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.usable():
            if _shared is not None and _shared.pid == os.getpid():
                _shared.kill()  # broken: its other windows' envs restart on a new one
            _shared = None
            _shared = _Chromium()
        return _shared


def close_shared() -> None:
    """Kill this process's shared Chromium now (its windows' envs start a new one when next used)."""
    global _shared
    with _shared_lock:
        if _shared is not None:
            _shared.kill()
            _shared = None


class Browser:
    """One window with a viewport of exactly ``size`` = (height, width) pixels, in this process's
    shared Chromium (``shared=False``: in a Chromium of its own)."""

    def __init__(self, size: tuple[int, int], *, shared: bool = True) -> None:
        self.size = size
        self.shared = shared
        self.arrived_at: str | None = None
        self.closed = False  # its window may since serve another Browser (see _SPARE_WINDOWS)
        """The URL of the page the last ``open``/``click``/``search`` arrived at, ``None`` while one is
        under way or failed: only these move the browser, so the env knows where it is without asking."""
        self._chromium = _shared_chromium() if shared else _Chromium()
        try:
            self.handle = self._chromium.open_window(size)
        except Exception as err:
            self._chromium.broken = True
            if not shared:
                self._chromium.kill()
            raise BrowserError(f"Chromium did not open a window: {err}") from err

    @property
    def profile(self) -> str:
        """The profile folder of the Chromium this window is in."""
        return self._chromium.profile

    @property
    def _driver(self) -> WebDriver:
        return self._chromium.driver

    # -- pages ------------------------------------------------------------------------------------

    def open(self, url: str) -> None:
        """Load ``url`` and wait until it is shown."""
        self.arrived_at = None
        with self._window() as driver:
            driver.get(url)
            self._wait(driver, lambda href: href == url)

    def click(self, element_id: str, arrived: Callable[[str], bool]) -> None:
        """Click the element ``element_id`` and wait for a page whose URL satisfies ``arrived``."""
        self.arrived_at = None  # until the wait ends, the page shown is not known
        with self._window() as driver:
            found = _evaluate(driver, _FIND_JS.format(locate=_LOCATE_AND_LEAVE, element_id=json.dumps(element_id)))
            _press(driver, found, element_id)
            self._wait(driver, arrived)

    def search(self, query: str, arrived: Callable[[str], bool]) -> None:
        """Write ``query`` in the search box, press Search and wait for the results page."""
        self.arrived_at = None
        with self._window() as driver:
            # The value is set by script, not typed: typing 10 kB key by key takes seconds.
            found = _evaluate(driver, _SET_QUERY_JS.format(locate=_LOCATE_AND_LEAVE, query=json.dumps(query)))
            _press(driver, found, "search-button")
            self._wait(driver, arrived)

    def screenshot(self) -> NDArray[np.uint8]:
        """The viewport as ``uint8[H, W, 3]``."""
        with self._window() as driver:
            shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})
        image = Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")
        if image.size != (self.size[1], self.size[0]):
            raise BrowserError(f"screenshot is {image.size[0]}x{image.size[1]}, expected {self.size[1]}x{self.size[0]}")
        return np.asarray(image, dtype=np.uint8).copy()

    @property
    def url(self) -> str:
        """The URL shown, asked of the browser (a round trip; see ``arrived_at``)."""
        with self._window() as driver:
            return str(driver.current_url)

    def _wait(self, driver: WebDriver, arrived: Callable[[str], bool]) -> None:
        from selenium.common.exceptions import JavascriptException, TimeoutException
        from selenium.webdriver.support.wait import WebDriverWait

        def ready(driver: Any) -> str | None:
            try:
                state, fonts, href, left = driver.execute_async_script(_READY_JS)
            except JavascriptException as err:
                if "unloaded" in str(err):  # the poll met the page being replaced: not arrived yet
                    return None
                raise
            except TimeoutException:  # the poll's script lost with its page (see _POLL_TIMEOUT): not arrived yet
                return None
            return href if state == "complete" and fonts == "loaded" and arrived(href) and not left else None

        try:
            self.arrived_at = WebDriverWait(driver, _TIMEOUT, poll_frequency=0.002).until(ready)
        except TimeoutException as err:
            raise BrowserError(f"the page did not arrive within {_TIMEOUT:.0f} s (at {_current_url(driver)})") from err
        except Exception as err:  # not a timeout: say what it was (it read as one, which hid the cause)
            first = str(err).strip().splitlines()[0] if str(err).strip() else ""
            raise BrowserError(f"waiting for the page failed: {type(err).__name__}: {first} (at {_current_url(driver)})") from err

    # -- processes --------------------------------------------------------------------------------

    def processes(self) -> list[psutil.Process]:
        """The live processes of this window's Chromium: the driver, Chromium and its helpers."""
        return self._chromium.processes()

    def driver_running(self) -> bool:
        """Whether this window's Chromium may be used: its driver's process runs (asked of the OS, not
        of the driver: no round trip), it is this process's and no command on it failed."""
        return not self.closed and self._chromium.usable() and self.handle in self._chromium.windows

    def alive(self) -> bool:
        """Whether the driver answers and Chromium still has this window."""
        if not self.driver_running():
            return False
        try:
            with self._window() as driver:
                driver.execute_script("return 1")
        except Exception:  # noqa: BLE001 - any failure means the browser is gone
            return False
        return True

    def close(self) -> None:
        """Close this window: a Chromium of its own (or a broken one) is killed with it, the shared
        one :data:`SHARED_IDLE_S` seconds after its last window closed; safe to call twice."""
        if not self.closed:
            self.closed = True
            self._chromium.close_window(self.handle, SHARED_IDLE_S if self.shared else 0.0, self.size)

    def _window(self) -> contextlib.AbstractContextManager[WebDriver]:
        if self.closed:
            raise BrowserError("this browser window was closed")
        return self._chromium.window(self.handle)


def _evaluate(driver: WebDriver, expression: str) -> Any:
    """The value of ``expression`` run in the page's main world (as ``execute_script`` runs a script), by
    CDP's ``Runtime.evaluate``; a JavaScript error raises ``JavascriptException``."""
    from selenium.common.exceptions import JavascriptException

    answer = driver.execute_cdp_cmd("Runtime.evaluate", {"expression": expression, "returnByValue": True})
    if "exceptionDetails" in answer:
        details = answer["exceptionDetails"]
        raise JavascriptException(f"javascript error: {details.get('exception', {}).get('description') or details.get('text')}")
    return answer["result"].get("value")


def _press(driver: WebDriver, point: Any, element_id: str) -> None:
    """A real click (the mouse pressed and released, trusted events, as chromedriver's element click
    sends them) at ``point`` = [x, y] of the element ``element_id``; a string ``point`` says why the
    element cannot be clicked. Two CDP commands, not chromedriver's click: that one also asks where the
    element is and whether it is covered (our script did), then waits for the navigation itself, about
    60 ms more a click for a wait that ours repeats (see :meth:`Browser._wait`)."""
    from selenium.common.exceptions import ElementNotInteractableException, NoSuchElementException

    if isinstance(point, str):
        error = NoSuchElementException if point == "no such element" else ElementNotInteractableException
        raise error(f"cannot click the element with id {element_id!r}: {point} (at {_current_url(driver)})")
    x, y = point
    for kind, buttons in (("mousePressed", 1), ("mouseReleased", 0)):
        driver.execute_cdp_cmd("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "buttons": buttons, "clickCount": 1})


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


def _current_url(driver: WebDriver) -> str:
    try:
        return str(driver.current_url)
    except Exception:  # noqa: BLE001 - only for a message
        return "an unknown page"


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

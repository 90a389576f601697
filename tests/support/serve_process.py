"""The real `kgym serve` as a child process on a free loopback port (restart and auth tests)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.support.server_fixtures import free_port

KGYM = Path(sys.executable).with_name("kgym")


class ServerProcess:
    """`kgym serve` as a child process on a free port, its log in `log`."""

    def __init__(self, state: Path, log: Path, *options: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        command = [str(KGYM), "serve", "--port", str(self.port), "--state", str(state), "--sandbox", "bwrap", *options]
        with log.open("a") as sink:
            self.process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"kgym serve exited with {self.process.returncode}:\n{log.read_text()}")
            try:
                if httpx.get(f"{self.url}/health", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"kgym serve did not answer:\n{log.read_text()}")
            time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs (its sandboxes die with it, bwrap --die-with-parent)."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()

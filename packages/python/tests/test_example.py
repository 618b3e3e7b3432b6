"""examples/first_order.py against a running service: from the source tree, and from a clean
`pip install ./packages/python` into a fresh virtual environment with no package index (the
in-tree build backend needs nothing from the network)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import support

service: support.Service
EXAMPLE = str(support.REPO / "examples" / "first_order.py")


def setUpModule() -> None:
    global service
    service = support.Service()


def tearDownModule() -> None:
    service.close()


def run_example(python: str, key: str, *args: str, pythonpath: str = "") -> "subprocess.CompletedProcess[str]":
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(STARPORT_API_KEY=key, STARPORT_BASE_URL=service.api)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return subprocess.run([python, EXAMPLE, *args], env=env, capture_output=True, text=True, timeout=120, cwd=tempfile.gettempdir())


class Example(unittest.TestCase):
    def test_the_example_buys_stars_and_reports_failures(self) -> None:
        account = service.account(test="10")
        done = run_example(sys.executable, account["test_key"], pythonpath=str(support.PACKAGE / "src"))
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("Test balance: 10 TON available, 0 TON reserved", done.stdout)
        self.assertIn("50 Stars cost 0.25 TON right now", done.stdout)
        self.assertRegex(done.stdout, r"Order ord_\w+ is delivered")
        self.assertIn("order.delivered", done.stdout)
        self.assertIn("Test balance now: 9.75 TON available, 0 TON reserved", done.stdout)
        refused = run_example(sys.executable, account["test_key"], "@test_invalid", pythonpath=str(support.PACKAGE / "src"))
        self.assertEqual(refused.returncode, 1)
        self.assertIn("@test_invalid cannot receive Stars (not_found)", refused.stderr)
        poor = run_example(sys.executable, service.account()["test_key"], pythonpath=str(support.PACKAGE / "src"))
        self.assertIn("Not enough test balance: 0 TON available, 0.25 TON needed", poor.stderr)
        self.assertEqual(run_example(sys.executable, "sk_live_x", pythonpath=str(support.PACKAGE / "src")).returncode, 2)

    def test_a_clean_offline_pip_install_into_a_fresh_venv_runs_the_example(self) -> None:
        root = tempfile.mkdtemp(prefix="starport-venv-")
        self.addCleanup(shutil.rmtree, root, True)
        venv = os.path.join(root, "venv")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=300)
        python = os.path.join(venv, "bin", "python")
        # A copy of the package, so that the build leaves nothing in the source tree.
        source = os.path.join(root, "python")
        shutil.copytree(str(support.PACKAGE), source, ignore=shutil.ignore_patterns("__pycache__", "tests"))
        env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_CACHE_DIR": "1"}
        env.pop("PYTHONPATH", None)
        install = subprocess.run([python, "-m", "pip", "install", source], env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(install.returncode, 0, install.stdout + install.stderr)
        shown = subprocess.run([python, "-c", "import starport, pathlib; print(starport.__version__, pathlib.Path(starport.__file__).parent.joinpath('py.typed').exists(), starport.__file__)"], env=env, capture_output=True, text=True, timeout=60)
        version, typed, location = shown.stdout.split()
        self.assertEqual((version, typed), ("0.1.0", "True"))
        self.assertTrue(location.startswith(venv), location)
        done = run_example(python, service.account(test="1")["test_key"])
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertRegex(done.stdout, r"Order ord_\w+ is delivered")


if __name__ == "__main__":
    unittest.main()

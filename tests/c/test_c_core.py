"""Run the C core's own tests (csrc/tests): refcount and allocator stress tests and kernel checks,
each compiled three ways (plain, ThreadSanitizer, AddressSanitizer + UBSan).

They are C programs, so pytest runs the script that builds and runs them and checks its verdict:
exit status 0, a summary line with no failures, and no sanitizer report in the output.
"""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "csrc" / "tests" / "run_c_tests.sh"


def test_c_core_under_sanitizers():
    result = subprocess.run(["bash", str(SCRIPT)], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    summary = re.search(r"^C tests: (\d+) passed, (\d+) failed$", result.stdout, re.MULTILINE)
    assert summary is not None, output[-6000:]
    assert int(summary.group(1)) >= 9 and int(summary.group(2)) == 0, summary.group(0)
    for marker in ("WARNING: ThreadSanitizer", "ERROR: AddressSanitizer", "runtime error:", "LeakSanitizer: detected"):
        assert marker not in output, output[-6000:]

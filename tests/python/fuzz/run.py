"""`make fuzz`: run the fuzz tests in batches with fresh seeds until
FUZZ_SECONDS have passed; stop at the first failing batch.

Each batch is one pytest run of test_fuzz.py and test_core_fuzz.py with
FUZZ_SEED set (printed, so a batch can be rerun exactly). Extra arguments go
to pytest (e.g. ``-n 2``, ``-k subtensor``).
"""

import os
import random
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent


def main(argv):
    budget = float(os.environ.get("FUZZ_SECONDS", 600))
    examples = os.environ.get("FUZZ_EXAMPLES", "100")
    deadline = time.monotonic() + budget
    batches = 0
    while time.monotonic() < deadline:
        seed = random.SystemRandom().randrange(2**32)
        env = dict(os.environ, FUZZ_SEED=str(seed), FUZZ_EXAMPLES=examples, CORE_FUZZ_EXAMPLES=examples)
        print(f"== fuzz batch {batches + 1}: FUZZ_SEED={seed}, {examples} examples per test", flush=True)
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   str(TESTS / "test_fuzz.py"), str(TESTS / "test_core_fuzz.py"), *argv]
        result = subprocess.run(command, env=env, cwd=TESTS.parent.parent)
        batches += 1
        if result.returncode != 0:
            print(f"== batch failed (FUZZ_SEED={seed}); shrunk cases are in tests/python/fuzz_cases/", flush=True)
            return result.returncode
    print(f"== {batches} batches passed in {budget:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""`make fuzz`: run the fuzz tests with fresh seeds for FUZZ_SECONDS of wall
time; stop at the first failing batch.

Each batch is one pytest run of test_fuzz.py's tests (FUZZ_EXAMPLES graphs
each) and test_core_fuzz.py's random programs (CORE_FUZZ_EXAMPLES) with
FUZZ_SEED set (printed) on FUZZ_WORKERS processes. Batches run one after
another; the one running when the time is up is stopped there: it passed
unless one of its tests had met a failure (fuzz/budget.py notes that in
FUZZ_FAILURE_FILE), which Hypothesis may still have been shrinking. A failure
is shrunk and, for test_fuzz.py, written to tests/python/fuzz_cases/;
shrinking may run past the budget by FUZZ_SHRINK_SECONDS (default 600; CI
gives 0). ``FUZZ_SEED=<seed> make fuzz`` reruns a batch: the same examples
in the same order, so it meets the failure again, shrinks it and saves it.
Extra arguments go to pytest (e.g. ``-k subtensor``).
"""

import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent


def main(argv):
    budget = float(os.environ.get("FUZZ_SECONDS", 600))
    examples = os.environ.get("FUZZ_EXAMPLES", "30")
    core_examples = os.environ.get("CORE_FUZZ_EXAMPLES", "300")
    workers = os.environ.get("FUZZ_WORKERS", "2")
    shrink = float(os.environ.get("FUZZ_SHRINK_SECONDS", 600))
    given_seed = os.environ.get("FUZZ_SEED")
    started = time.monotonic()
    deadline = started + budget
    batches = 0
    while time.monotonic() < deadline - 5:
        seed = int(given_seed) if given_seed and not batches else random.SystemRandom().randrange(2**32)
        failures = Path(tempfile.mkstemp(prefix="fuzz-failures-")[1])
        env = dict(os.environ, FUZZ_SEED=str(seed), FUZZ_EXAMPLES=examples, CORE_FUZZ_EXAMPLES=core_examples,
                   FUZZ_FAILURE_FILE=str(failures))
        print(f"== fuzz batch {batches + 1}: FUZZ_SEED={seed}, {examples} graphs per test_fuzz test, "
              f"{core_examples} core programs, {workers} workers", flush=True)
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", workers,
                   f"{TESTS / 'test_fuzz.py'}::test_fuzz",
                   f"{TESTS / 'test_core_fuzz.py'}::test_random_programs_build_valid_models", *argv]
        process = subprocess.Popen(command, env=env, cwd=TESTS.parent.parent, start_new_session=True)
        try:
            returncode = process.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            if failures.read_text():
                try:  # a failure is being shrunk: give it FUZZ_SHRINK_SECONDS
                    returncode = process.wait(timeout=shrink) or 1
                except subprocess.TimeoutExpired:
                    returncode = None
            else:
                returncode = 0
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            if returncode is None:
                print(f"== batch stopped while shrinking a failure ({failures.read_text().strip()}): "
                      f"FUZZ_SEED={seed} make fuzz reruns it and saves the shrunk case", flush=True)
                failures.unlink()
                return 1
            if returncode == 0:
                print(f"== batch {batches + 1} stopped at the end of the time, no failure", flush=True)
        failures.unlink()
        batches += 1
        if returncode != 0:
            print(f"== batch failed (FUZZ_SEED={seed} make fuzz reruns it); shrunk differential cases are in "
                  "tests/python/fuzz_cases/ (fix, then commit them with a note)", flush=True)
            return returncode
    print(f"== {batches} batches, no failure, in {time.monotonic() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

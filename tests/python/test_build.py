"""The build and install tooling: the messages a new user sees when
something is missing."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake (installed by make system-deps)")
def test_missing_protobuf_names_the_packages_to_install(tmp_path):
    # What `pip install .` shows on a machine without the protobuf packages.
    result = subprocess.run(
        ["cmake", "-S", str(REPO), "-B", str(tmp_path), "-DCMAKE_DISABLE_FIND_PACKAGE_Protobuf=TRUE",
         "-DPYTENSOR_ONNX_BUILD_PYTHON=OFF", f"-DPython_EXECUTABLE={sys.executable}"],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode != 0
    message = " ".join(result.stderr.split())
    assert "protobuf-compiler libprotobuf-dev" in message
    assert "make system-deps" in message


def test_the_install_builds_the_kernel_library():
    # `make system-deps` fetches ONNX Runtime's headers and Boost, so every
    # install the Makefile makes (CI's included) has the library; without it
    # mode ONNX would quietly run the portable graph.
    from pytensor_onnx import kernels

    assert kernels.unavailable_reason() is None, kernels.unavailable_reason()


def test_find_python_reports_a_missing_version():
    result = subprocess.run(
        ["sh", str(REPO / "tools" / "find_python.sh"), "2.1"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert "Python 2.1 was not found" in result.stderr
    assert "pyenv install 2.1" in result.stderr


def test_find_python_finds_the_running_interpreter():
    version = "%d.%d" % sys.version_info[:2]
    result = subprocess.run(
        ["sh", str(REPO / "tools" / "find_python.sh"), version], capture_output=True, text=True, check=True
    )
    found = result.stdout.strip()
    reported = subprocess.run([found, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                              capture_output=True, text=True, check=True).stdout.strip()
    assert reported == version

"""A failure of lakecert's own Kernel driver (it does not fit the jars it was started with) is never
Kernel's answer: the driver classifies it as ``harness`` (Errors.java) and the Python side raises
``KernelHarnessError``, which the run turns into ERROR, never NOT_APPLICABLE (Kernel's refusal) or
FAIL (a Kernel defect). The Python side without a JVM (the driver's protocol lines are fed to
``KernelProcess`` directly); the driver's own classification with a small probe program."""

from __future__ import annotations

import json
import queue
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.delta_kernel.engine import KernelDeltaEngine
from conformance.adapters.delta_kernel.jvm import (
    DEFAULT_CLASSES,
    DEFAULT_JARS,
    KernelDied,
    KernelFailed,
    KernelHarnessError,
    KernelProcess,
    KernelSetupError,
    classpath,
)
from conformance.checks.delta_conflicts.scenarios import WRITE_SERIALIZABLE
from conformance.contract.delta import AdapterBroken
from conformance.contract.delta_engine import NotSupported
from conformance.plugin.outcomes import blames_product

NO_SUCH_METHOD = {
    "type": "error",
    "kind": "harness",
    "class": "java.lang.NoSuchMethodError",
    "message": "'io.delta.kernel.commit.Committer io.delta.kernel.Snapshot.getCommitter()'",
    "causes": [],
}


def _process_answering(*lines: dict[str, Any]) -> KernelProcess:
    """A ``KernelProcess`` whose driver says ``lines`` (no JVM: the reader queue is filled by hand)."""
    process = KernelProcess.__new__(KernelProcess)
    process._lines = queue.Queue()
    for line in lines:
        process._lines.put(json.dumps(line))
    process._timeout_s = 1.0
    process._stderr = []
    return process


def test_a_harness_error_from_the_driver_is_raised_as_such() -> None:
    process = _process_answering(NO_SUCH_METHOD)
    with pytest.raises(KernelHarnessError) as raised:
        process._exchange(lambda event: None)
    assert raised.value.java_class == "java.lang.NoSuchMethodError"
    assert not isinstance(raised.value, KernelFailed)  # which adapters turn into contract errors
    assert isinstance(raised.value, KernelDied) and isinstance(raised.value, AdapterBroken)


def test_kernel_errors_stay_kernel_failures() -> None:
    conflict = {**NO_SUCH_METHOD, "kind": "conflict", "class": "io.delta.kernel.exceptions.ConcurrentWriteException"}
    with pytest.raises(KernelFailed) as raised:
        _process_answering(conflict)._exchange(lambda event: None)
    assert raised.value.kind == "conflict"


def test_a_harness_error_ends_as_error_not_as_a_verdict_on_kernel() -> None:
    """``conformance/plugin/outcomes.py``: an exception that does not blame the product is ERROR."""
    error = KernelHarnessError("java.lang.NoClassDefFoundError", "io/delta/kernel/Snapshot", [])
    assert not blames_product(error)
    assert not isinstance(error, NotSupported)


class _BrokenDriver:
    """What the engine sees when the driver does not fit its jars: every request ends in a harness error."""

    def call(self, request: dict[str, Any], observer: object) -> Any:
        raise KernelHarnessError("java.lang.NoSuchMethodError", f"during {request['op']}", [])


def test_the_engine_never_turns_a_harness_error_into_not_supported(tmp_path: Path) -> None:
    """``create_table`` turns Kernel's refusal of a table into ``NotSupported`` (NOT_APPLICABLE); a
    broken driver must get through as itself."""
    engine = KernelDeltaEngine(_BrokenDriver(), tmp_path)  # type: ignore[arg-type]
    with pytest.raises(KernelHarnessError):
        engine.create_table("t", WRITE_SERIALIZABLE[0])


def test_the_hello_line_gives_the_loaded_versions_per_component() -> None:
    hello = {
        "type": "ready",
        "kernel": "4.4.1",
        "components": {"delta-kernel-api": "4.4.1", "delta-kernel-defaults": "4.4.0"},
    }
    process = KernelProcess.__new__(KernelProcess)  # no JVM: only the hello's parsing is under test
    process._read_hello(hello)
    assert process.kernel_version == "4.4.1"
    assert process.components == {"delta-kernel-api": "4.4.1", "delta-kernel-defaults": "4.4.0"}
    process._read_hello({"type": "ready"})
    assert process.kernel_version == "unknown" and process.components == {}


CLASSIFY = """
package lakecert.kernel;

public final class ClassifyProbe {
  public static void main(String[] args) {
    Throwable conflict = new io.delta.kernel.exceptions.ConcurrentWriteException();
    Throwable[] cases = {
      new NoSuchMethodError("Snapshot.getCommitter"),
      new RuntimeException(new NoClassDefFoundError("io/delta/kernel/Snapshot")),
      new KernelCompat.HarnessError("createUCCommitter", new NoSuchMethodException("createUCCommitter")),
      new IllegalStateException(new ClassNotFoundException("io.delta.kernel.Snapshot")),
      new RuntimeException("wrapped", new java.lang.reflect.InvocationTargetException(conflict)),
      conflict,
    };
    for (Throwable t : cases) {
      System.out.println(Errors.kind(t));
    }
  }
}
"""


@pytest.mark.slow
def test_the_driver_classifies_linkage_and_reflection_failures_as_harness(tmp_path: Path) -> None:
    """Errors.kind on the compiled driver: a LinkageError or a failed lookup anywhere in the chain is
    ``harness``, even under a conflict; Kernel's exception carried by reflection stays Kernel's."""
    try:
        cp = classpath(DEFAULT_JARS, DEFAULT_CLASSES)
    except KernelSetupError as e:  # no set-up: nothing to run the probe on
        pytest.skip(f"the Kernel driver is not built: {e}")
    source = tmp_path / "lakecert" / "kernel" / "ClassifyProbe.java"
    source.parent.mkdir(parents=True)
    source.write_text(CLASSIFY)
    built = tmp_path / "classes"
    subprocess.run(["javac", "-nowarn", "-d", str(built), "-cp", cp, str(source)], check=True, capture_output=True)
    done = subprocess.run(
        ["java", "-cp", f"{built}:{cp}", "lakecert.kernel.ClassifyProbe"], check=True, capture_output=True, text=True
    )
    assert done.stdout.split() == ["harness", "harness", "harness", "harness", "conflict", "conflict"]

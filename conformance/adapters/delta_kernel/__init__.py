"""Delta Kernel (Java) as a client target: a JVM driver over JSON lines, bound to the served reference catalog."""

from conformance.adapters.delta_kernel.target import DeltaKernelTarget

__all__ = ["DeltaKernelTarget"]

"""Built-in adapters to systems lakecert does not own, one module or package each.

Each implements only the contract (``conformance.contract``), exactly as a vendor's adapter would.
"""

"""Round 5 clean-room faults: faulty catalogs and clients written from the RFC and the public contract only.

Each variant in ``variants`` is a ``DurableTarget`` (``tests.cleanroom_r3.base``) with one side swapped
for a subclass that breaks one rule under a condition a shallow suite does not set up.
"""

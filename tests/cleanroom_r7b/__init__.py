"""Round 7b of the clean-room faulty variants: one faulty side (catalog or client) per target, each a
subclass of the durable round-3 baseline, aimed at details a shallow suite would not look at (see
``variants.py``)."""

"""Round 7 faulty variants of the clean-room catalog and client (see ``variants.py``)."""

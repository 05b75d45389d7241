"""Clean-room targets: a catalog and Delta client written from lakecert's public docs alone, and faulty variants.

``target.CleanRoomTarget`` is the correct one; ``variants`` holds one small subclass per broken rule.
They measure how many faults lakecert catches (issue 18, item 2; docs/mutation.md).
"""

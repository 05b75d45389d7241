"""Round 13 (b): faulty client variants (writers and readers) of the durable clean-room baseline."""

"""Round 14b: blind faulty client variants of the durable clean-room baseline."""

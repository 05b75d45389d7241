"""Round 6 of the clean-room faulty variants: each target swaps one side of the durable baseline."""

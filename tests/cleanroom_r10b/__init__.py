"""Round 10 (writer D): faulty writing and reading clients over the durable clean-room baselines."""

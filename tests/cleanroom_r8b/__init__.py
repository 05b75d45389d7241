"""Round 8b faulty clean-room variants (one fault each)."""

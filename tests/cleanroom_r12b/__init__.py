"""Round 12b: faulty clean-room clients (writers and readers) for the blind evaluation of lakecert."""

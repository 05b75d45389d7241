"""Round 9 (writer B): faulty clients for catalog-managed Delta tables, written blind of the suite."""

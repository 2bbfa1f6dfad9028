"""Storage: every SQL statement of FAA, one module per table or concern, on the pool in `database`."""

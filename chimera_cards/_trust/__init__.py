"""Keys and the trust policy: signed review statements, trusted keys, verdicts."""

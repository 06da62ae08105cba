"""The benchmark: arms, paired runs and statistics."""

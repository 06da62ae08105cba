"""Running the loop: attempt, verify, capture the diff, revert, retry; the card's checks."""

"""The verdict on an attempt: running the verifier and the protected paths."""

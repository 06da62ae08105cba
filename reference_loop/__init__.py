"""reference_loop: the reference implementation of the card *carry the failure forward*.

A retry loop (attempt -> verify -> capture the real diff -> revert -> retry) that keeps a list of
per-attempt records and renders every one of them into the next prompt.
"""

__version__ = "0.1.0"

"""Scanning a card or bundle for problems: shape lint, the hidden-instruction scan, code scan."""

"""Retrieval behind the approval gate: the gate, matching, rendering for a prompt, export."""

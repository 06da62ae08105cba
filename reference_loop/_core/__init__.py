"""The loop's core: attempt records, history, failure signatures, ledger, planner, events, cards."""

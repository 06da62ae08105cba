"""The demo walk: import, review, retrieve and run the loop on a sample task."""

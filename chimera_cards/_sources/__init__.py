"""Where skills come from: local folders, URLs, archives and git."""

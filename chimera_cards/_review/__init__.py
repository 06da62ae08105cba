"""Review: approve/reject/retire, the review screen and queue, statements files, trust files."""

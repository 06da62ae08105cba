"""A skill as a bundle of files: reading a folder, the manifest and where a bundle is hashed."""

"""The card store: one SQLite file of blobs, versions, the audit chain, statements, search.

A leaf: it imports only ``util``, ``bundles`` and ``errors``. All SQL lives in this package.
"""

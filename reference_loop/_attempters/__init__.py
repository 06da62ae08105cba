"""Attempters: whatever edits the workspace for one attempt (a scripted fixer, a CLI agent, model).

The protocol (``base``) is small on purpose: the loop hands over the prompt and the workspace
path; the attempter edits files and reports its tool steps. It never reports its patch: the loop
takes the real diff from the workspace, so an attempter's account of what it did cannot stand in
for it. ``factory.make_attempter`` turns a spec into one. The names in ``__all__`` are loaded on
first use (PEP 562), so importing one module of this package never imports its siblings.
"""

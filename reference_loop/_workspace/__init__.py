"""The attempt workspace: snapshot, diff and restore of a task's folder.

One contract (``core.Workspace``), two engines (``engines``): ``git`` stages through git's own
plumbing (``staging``) and is complete on its own; ``fast`` puts the hand-written index and pack
path (``fast``, ``gitindex``, ``gitstore``) in front of it. ``privategit`` (the private store),
``scan`` (passes over the directories) and ``restore`` (writing the snapshot back) serve both.
"""

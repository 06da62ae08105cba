"""The gate at run time: what agents are served, and what stops a drifted skill as it loads.

- ``catalog``: the skills that may be served now (store or agent folder), re-hashed per read.
- ``mcp_server``: the MCP Skills extension over a catalog (optional extra ``mcp``).
- ``claude_hook``: the Claude Code ``PreToolUse`` / ``SessionStart`` hook and its installer.
- ``to_prompt``: ``<available_skills>`` for every installed, approved, ``ok`` skill.
- ``installed``: every skill folder of every agent, with its state.

Modules are imported by name; this package imports nothing up front.
"""

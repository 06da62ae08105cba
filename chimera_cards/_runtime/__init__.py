"""The gate at run time: what agents are served, and what stops a drifted skill as it loads.

- ``catalog``: the skills that may be served now (store or agent folder), re-hashed per read.
- ``mcp_server``: the MCP Skills extension over a catalog (optional extra ``mcp``).
- ``agent_hooks``: the Claude Code / Gemini CLI hook command and its settings installer.
- ``to_prompt``: ``<available_skills>`` for every installed, approved, ``ok`` skill.
- ``installed``: every skill folder of every agent, with its state.
- ``check_sarif``: a check report as SARIF 2.1.0.

Importing one module of this package never imports its siblings (nor the MCP SDK).
"""

"""Plug-ins other programs load: the llm GGUF model plugin and the chimera-cards command plugin."""

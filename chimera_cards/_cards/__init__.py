"""The card: parsing SKILL.md (frontmatter, sections) and rendering it for a prompt."""

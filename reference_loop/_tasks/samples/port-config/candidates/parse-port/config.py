"""Settings read from the environment."""


def _parse_port(raw):
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"PORT must be a number, got {raw!r}") from None


def get_port(env):
    return _parse_port(env.get("PORT", "8080"))

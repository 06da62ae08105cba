"""Settings read from the environment."""


def get_port(env):
    return env.get("PORT", 8080)

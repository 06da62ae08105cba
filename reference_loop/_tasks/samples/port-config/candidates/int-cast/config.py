"""Settings read from the environment."""


def get_port(env):
    port_value = env.get("PORT", 8080)
    return int(port_value)

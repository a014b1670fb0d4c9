"""The suite's own machinery (SPEC §5) has no closed forms to derive: no artifacts."""


def artifacts() -> list:
    return []

"""The environment a ``run_command`` command gets: an allow-list, never the agent's secrets.

The agent's own environment holds what it needs to reach its model (``OPENAI_API_KEY``,
tokens of a proxy...). A model-chosen command must not see those, so a command starts
from an empty environment and gets only:

- the variables named in :data:`ALLOWED` and every ``LC_*`` locale variable;
- the extra names the user configured (``acp2 agent --command-env NAME``);
- ``PWD`` set to the command's directory, and ``TERM=dumb`` when none is set (the output
  goes to a pipe, not a terminal).

Whatever the list says, a variable is dropped when its name looks like a secret
(:func:`looks_secret`: it contains ``KEY``, ``TOKEN``, ``SECRET``, ``PASSW``,
``CREDENTIAL``, ``AUTH``, ``COOKIE`` or ``PRIVATE``, in any case) or when its value
contains one of the configured secret values (the provider's API key, however it was
given).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = [
    "ALLOWED",
    "REDACTED",
    "SECRET_WORDS",
    "command_env",
    "environment_secrets",
    "looks_secret",
    "redact",
]

#: Variables passed through to commands when the agent has them.
ALLOWED: tuple[str, ...] = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "TMPDIR",
    "VIRTUAL_ENV",
    "NO_COLOR",
)

#: Parts of a variable name that mark it as a secret (compared in upper case).
SECRET_WORDS: tuple[str, ...] = (
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSW",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "PRIVATE",
)

#: Secret values shorter than this are not searched for (they would match by chance).
MIN_SECRET_LENGTH = 6
#: What a secret value in a tool's output becomes before the model reads it.
REDACTED = "[redacted]"


def looks_secret(name: str) -> bool:
    """True when ``name`` contains one of :data:`SECRET_WORDS` (case-insensitive)."""
    upper = name.upper()
    return any(word in upper for word in SECRET_WORDS)


def command_env(
    source: Mapping[str, str],
    *,
    cwd: str,
    extra: Iterable[str] = (),
    secrets: Iterable[str] = (),
    overrides: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of a command run in ``cwd``, picked from ``source``.

    ``extra`` names more variables to pass; ``secrets`` are values that must not appear
    in any variable; ``overrides`` are set last (the sandbox's ``HOME`` and ``TMPDIR``),
    and are checked like the rest.
    """
    wanted = set(ALLOWED) | set(extra)
    env = {k: v for k, v in source.items() if k in wanted or k.startswith("LC_")}
    env["PWD"] = cwd
    env.setdefault("TERM", "dumb")
    env.update(overrides or {})
    hidden = [s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH]
    return {
        k: v
        for k, v in env.items()
        if not looks_secret(k) and not any(s in v for s in hidden) and "\0" not in k + v
    }


def environment_secrets(source: Mapping[str, str]) -> list[str]:
    """The values of ``source``'s secret-looking variables (:func:`looks_secret`) worth
    searching for: at least :data:`MIN_SECRET_LENGTH` characters, and not an absolute
    path (``SSH_AUTH_SOCK``, ``XAUTHORITY`` name files, not secrets)."""
    return [
        value
        for name, value in source.items()
        if looks_secret(name) and len(value) >= MIN_SECRET_LENGTH and not value.startswith("/")
    ]


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret (of :data:`MIN_SECRET_LENGTH`
    characters or more) replaced by :data:`REDACTED`, longest secrets first."""
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= MIN_SECRET_LENGTH and secret in text:
            text = text.replace(secret, REDACTED)
    return text

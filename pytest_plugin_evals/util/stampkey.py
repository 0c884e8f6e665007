"""The stamp key: a secret of the operator's, outside every sandbox, that signs what a session
keeps for a later one to trust (``--eval-reuse``'s stamps).

The key is ``$EVAL_STAMP_KEY`` when it is set (for CI machines that share results folders
between jobs: named like a secret, it is never passed into a run and is redacted), else the
file ``stamp-key`` in ``$XDG_STATE_HOME/pytest-plugin-evals/`` (``~/.local/state/…`` when
that is unset), made on first use: 32 random bytes, mode 0600, in a folder of mode 0700. A run
never sees it: its home, state and config folders are its own, the operator's home is hidden.
A key file that is a link, not the operator's, or readable by others is refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: The variable that holds a shared key (CI).
ENV = "EVAL_STAMP_KEY"
#: The key file's name in the state folder.
FILE_NAME = "stamp-key"
#: Random bytes in a key made on first use.
KEY_BYTES = 32
#: A key from the environment shorter than this is refused.
MIN_ENV_KEY = 32


class StampKeyError(Exception):
    """No usable stamp key: one line saying why."""


def key_file(environ: Mapping[str, str]) -> Path:
    """Where the operator's stamp key is kept."""
    state = environ.get("XDG_STATE_HOME", "").strip()
    if state and os.path.isabs(state):
        base = Path(state)
    else:
        base = Path(environ.get("HOME") or Path.home()) / ".local" / "state"
    return base / "pytest-plugin-evals" / FILE_NAME


def load_stamp_key(environ: Mapping[str, str] = os.environ) -> bytes:
    """The stamp key (made on first use); :class:`StampKeyError` when there is none usable."""
    shared = environ.get(ENV)
    if shared is not None:
        if len(shared.strip()) < MIN_ENV_KEY:
            raise StampKeyError(f"${ENV} is shorter than {MIN_ENV_KEY} characters")
        return shared.strip().encode("utf-8")
    path = key_file(environ)
    try:
        if not os.path.lexists(path):
            _make(path)
        return _read(path)
    except OSError as exc:
        raise StampKeyError(f"the stamp key {path}: {exc.strerror or exc}") from None


def _make(path: Path) -> None:
    """Write a new key where none is, atomically: a concurrent process keeps the first one."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    spare = path.with_name(f".{FILE_NAME}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(spare, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(secrets.token_hex(KEY_BYTES) + "\n")
        with contextlib.suppress(FileExistsError):  # another process made it first
            os.link(spare, path)
    finally:
        spare.unlink(missing_ok=True)


def _read(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise StampKeyError(f"the stamp key {path} is not a regular file")
        if st.st_uid != os.geteuid():
            raise StampKeyError(f"the stamp key {path} belongs to another user")
        if st.st_mode & 0o077:
            raise StampKeyError(f"the stamp key {path} can be read by others (chmod 600 it)")
        text = fh.read(4096).decode("ascii", errors="replace").strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) < KEY_BYTES:
        raise StampKeyError(f"the stamp key {path} is not {KEY_BYTES} bytes of hex")
    return key


def sign(key: bytes, doc: Mapping[str, Any]) -> str:
    """The HMAC-SHA256 of ``doc`` as canonical JSON, in hex."""
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hmac.new(key, text.encode("ascii"), hashlib.sha256).hexdigest()


def signed(key: bytes, doc: Mapping[str, Any], mac: object) -> bool:
    """Whether ``mac`` is ``doc``'s signature under ``key`` (compared in constant time)."""
    return isinstance(mac, str) and hmac.compare_digest(sign(key, doc), mac)

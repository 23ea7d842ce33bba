"""Named profiles (service URL, user name, token and its expiry) in the user's config directory:
`$XDG_CONFIG_HOME/pas/profiles.json`, else `~/.config/pas/profiles.json`, readable by its owner alone (0600,
in a 0700 directory): it holds bearer tokens."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from pas_cli.errors import NotSignedIn

DEFAULT_PROFILE = "default"


@dataclass(frozen=True)
class Profile:
    name: str
    url: str
    username: str
    token: str
    expiresAt: str
    """ISO-8601 UTC: when the token stops working (the sign-in's `expires_in` after it was granted)."""

    def expired(self, now: datetime | None = None) -> bool:
        return datetime.fromisoformat(self.expiresAt) <= (now or datetime.now(timezone.utc))

    def login_hint(self) -> str:
        profile = "" if self.name == DEFAULT_PROFILE else f" --profile {self.name}"
        return f"pas login --url {self.url} --username {self.username}{profile}"


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "pas"


def profiles_file() -> Path:
    return config_dir() / "profiles.json"


def load_all() -> dict[str, Profile]:
    try:
        stored = json.loads(profiles_file().read_text())
    except FileNotFoundError:
        return {}
    return {
        name: Profile(name=name, **{k: v for k, v in fields.items() if k != "name"})
        for name, fields in stored.get("profiles", {}).items()
    }


def load(name: str) -> Profile:
    found = load_all().get(name)
    if found is None:
        option = "" if name == DEFAULT_PROFILE else f" --profile {name}"
        raise NotSignedIn(
            f"no profile '{name}' in {profiles_file()}: sign in first with pas login --url URL --username USER{option}"
        )
    return found


def save(profile: Profile) -> Path:
    """Adds or replaces the profile; the file is written whole, mode 0600 from its creation on."""
    profiles = load_all()
    profiles[profile.name] = profile
    body = {
        "profiles": {name: {k: v for k, v in asdict(p).items() if k != "name"} for name, p in sorted(profiles.items())}
    }
    directory = config_dir()
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=".profiles-")  # created 0600
    with os.fdopen(descriptor, "w") as out:
        json.dump(body, out, indent=2)
    os.chmod(temporary, 0o600)
    target = profiles_file()
    os.replace(temporary, target)
    return target

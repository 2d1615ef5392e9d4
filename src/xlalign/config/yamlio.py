"""Reading a configuration file strictly: a key repeated in one mapping, bytes that are not
UTF-8, a directory or a missing file are refused with a :class:`ConfigError` naming the
file (and the line), never a traceback or a silently kept last value.

Snakemake reads ``--configfile`` with its own loader; the Snakefile reads the same files
again with :func:`read_config_file` before validating, so both paths refuse the same files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from xlalign.core.errors import ConfigError


class _StrictLoader(yaml.SafeLoader):
    """A SafeLoader that refuses a key given twice in one mapping."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # `<<: *anchor`: explicit keys beside it may override what it merges
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            continue  # the base constructor reports an unhashable key
        line = key_node.start_mark.line + 1
        if key in seen:
            raise ConfigError(
                f"{loader.name}: line {line}: key {key!r} given twice in one mapping "
                f"(first on line {seen[key]}); expected each key once"
            )
        seen[key] = line
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _utf8_error(path: Path, data: bytes, exc: UnicodeDecodeError) -> ConfigError:
    line = data.count(b"\n", 0, exc.start) + 1
    return ConfigError(
        f"{path}: line {line} (byte {exc.start}): invalid UTF-8 ({exc.reason}); "
        "expected a UTF-8 YAML file"
    )


def parse_config_text(text: str, *, origin: str) -> Any:
    """The YAML document of ``text`` (strict: repeated keys refused)."""
    loader = _StrictLoader(text)
    loader.name = origin
    try:
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        raise ConfigError(f"{origin}: invalid YAML: {exc}") from None
    finally:
        loader.dispose()


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The mapping in YAML file ``path`` (an empty file is ``{}``)."""
    p = Path(path)
    if p.is_dir():
        raise ConfigError(f"{p}: is a directory; expected a YAML config file")
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{p}: config file not found") from None
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read the config file: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _utf8_error(p, data, exc) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    raw = parse_config_text(text, origin=str(p))
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{p}: expected a mapping at the top level, got {type(raw).__name__}")
    return raw

"""Reading a configuration file strictly: a key repeated in one mapping, bytes that are not
UTF-8, control characters, a key that is not a string, a recursive or exploding alias, a
directory or a missing file are refused with a :class:`ConfigError` naming the file (and
the line or key), never a traceback or a silently kept last value.

Snakemake reads ``--configfile`` with its own loader; the Snakefile reads the same files
again with :func:`read_config_file` and validates what it reads (with ``--config`` on
top), so both paths refuse, and accept, the same files.
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


#: Values (mapping entries, list items, scalars) a configuration may hold once its aliases
#: are expanded: the largest configuration holds a few thousand; a few aliases nested
#: ("billion laughs") expand to billions, which validation would walk for minutes.
MAX_VALUES = 200_000
#: A key that makes Snakemake's config loader evaluate the file as a YTE template (Python
#: expressions), which the strict reader does not: the two would see different values.
_YTE_KEY = "__use_yte__"


def _reader_error(origin: str, text: str, exc: yaml.reader.ReaderError) -> ConfigError:
    line = text.count("\n", 0, max(exc.position, 0)) + 1
    return ConfigError(
        f"{origin}: line {line}: character U+{exc.character:04X} is not allowed in YAML "
        "(control characters other than tab and newline); expected a text file"
    )


def _key_path(path: tuple[Any, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<top level>"


def check_values(data: Any, *, origin: str) -> None:
    """Refuse what YAML can express but a configuration cannot hold: a recursive alias,
    aliases expanding past :data:`MAX_VALUES` values, a key that is not a string (YAML 1.1
    reads ``yes``, ``no``, ``on``, ``off`` and ``null`` as booleans and null, numbers as
    numbers), and a string holding a lone surrogate (``"\\ud800"``), which is no text."""
    count = 0
    # (value, path, ids of the containers above it): depth-first, no recursion
    stack: list[tuple[Any, tuple[Any, ...], frozenset[int]]] = [(data, (), frozenset())]
    while stack:
        value, path, above = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise ConfigError(
                f"{origin}: more than {MAX_VALUES:,} values once YAML aliases are expanded; "
                "expected a configuration (aliases nested inside aliases?)"
            )
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ConfigError(
                    f"{origin}: {_key_path(path)}: {value[:40]!r} holds a lone surrogate "
                    "(a \\ud800-\\udfff escape); expected text"
                ) from None
            continue
        if not isinstance(value, (dict, list)):
            continue
        if id(value) in above:
            raise ConfigError(
                f"{origin}: {_key_path(path)}: a YAML alias refers to a value that holds it "
                "(recursive); expected a tree of values"
            )
        inner = above | {id(value)}
        if isinstance(value, list):
            stack.extend((v, (*path, i), inner) for i, v in enumerate(value))
            continue
        for k, v in value.items():
            if not isinstance(k, str):
                raise ConfigError(
                    f"{origin}: {_key_path((*path, str(k)))}: key {k!r} is not a string "
                    f"but {type(k).__name__} (YAML reads yes/no/on/off/true/false "
                    "as booleans, ~ and null as null, digits as numbers); quote it"
                )
            stack.append((v, (*path, k), inner))
    if isinstance(data, dict) and _YTE_KEY in data:
        raise ConfigError(
            f"{origin}: {_YTE_KEY}: YTE templates are not supported (Snakemake would evaluate "
            "their Python expressions, check-config would not); expected plain YAML"
        )


def parse_config_text(text: str, *, origin: str) -> Any:
    """The YAML document of ``text`` (strict: repeated keys refused)."""
    try:
        loader = _StrictLoader(text)
    except yaml.reader.ReaderError as exc:
        raise _reader_error(origin, text, exc) from None
    loader.name = origin
    try:
        data = loader.get_single_data()
    except yaml.reader.ReaderError as exc:
        raise _reader_error(origin, text, exc) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{origin}: invalid YAML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{origin}: YAML nested too deeply; expected a configuration") from None
    finally:
        loader.dispose()
    check_values(data, origin=origin)
    return data


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

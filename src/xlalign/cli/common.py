"""What the command modules share: the stats file beside an output, the JSON report, the
argument types that check numbers and paths, and :func:`check_paths`, which refuses
outputs that collide with each other or with an input before any work starts.

A number is checked while the command line is parsed; a path (:class:`PathArg`: an input
that must exist and not be a directory, an output whose directory can be written) right
after, by :func:`check_path_args`, so that a command line still parses anywhere (a
torchrun worker's, a test's). Both are usage errors (exit status 2, ``xlalign <cmd>:
error: argument --x: ...``) found before anything is read; :func:`check_paths` raises
:class:`~xlalign.core.errors.InputError` (exit status 1).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from xlalign.core.cadence import DEFAULT_INTERVAL_MINUTES
from xlalign.core.errors import InputError
from xlalign.core.io import json_safe


def default_stats_path(output: str) -> str:
    """The stats JSON beside ``output``: its name with the last suffix replaced by ``.json``."""
    p = Path(output)
    return str(p.with_name(p.name.rsplit(".", 1)[0] + ".json"))


def report(stats: dict, args: argparse.Namespace) -> None:
    """Print ``stats`` as JSON on stdout, unless ``-q`` (words holding escaped bytes shown
    as :func:`xlalign.core.io.json_text` writes them)."""
    if not args.quiet:
        print_json(stats)


def print_json(obj: object) -> None:
    """``obj`` as pretty, key-sorted JSON on stdout, strings made safe for UTF-8."""
    json.dump(json_safe(obj), sys.stdout, indent=2, sort_keys=True, ensure_ascii=False)
    sys.stdout.write("\n")


# --------------------------------------------------------------------------- spaces


def _reader_policy(attr: str, name: str) -> Callable[[str], str]:
    """An argparse type for one of the word2vec readers' policies (``attr`` in
    :mod:`xlalign.core.formats.word2vec`), read there when a value is parsed (the module
    needs numpy, which ``xlalign --help`` should not load)."""

    def parse(text: str) -> str:
        from xlalign.core.formats import word2vec

        allowed = getattr(word2vec, attr)
        if text not in allowed:
            raise argparse.ArgumentTypeError(f"expected one of {', '.join(allowed)}, got {text!r}")
        return text

    parse.__name__ = name
    return parse


def add_space_reading(
    p: argparse.ArgumentParser | argparse._ArgumentGroup, *, suppress: bool = False
) -> None:
    """``--encoding-errors`` and ``--duplicates``: how the word2vec readers take a user's
    ``.vec``/``.bin`` file (:mod:`xlalign.core.formats.word2vec`); see :func:`space_reading`.
    With ``suppress``, an option not given is left out of the namespace (the reader's
    default then applies where the values go, e.g. ``X2StaticArgs``)."""
    p.add_argument(
        "--encoding-errors",
        default=argparse.SUPPRESS if suppress else "replace",
        type=_reader_policy("ENCODING_ERRORS", "replace|ignore|surrogateescape|strict"),
        help="a word that is not valid UTF-8 (fastText writes such words): replace (U+FFFD, "
        "the default), ignore (MUSE: the bytes dropped), surrogateescape (VecMap: the "
        "bytes kept and written back; JSON shows them as \\xNN), strict (refused with "
        "its line); the count is in the stats",
    )
    p.add_argument(
        "--duplicates",
        default=argparse.SUPPRESS if suppress else "error",
        type=_reader_policy("DUPLICATE_POLICIES", "error|first"),
        help="a word on two rows: error (refused with both lines, the default) or first "
        "(keep the first row, as MUSE does); the count is in the stats",
    )


def space_reading(args: argparse.Namespace) -> dict[str, str]:
    """The keyword arguments of :func:`xlalign.static.vectors.load_space` that
    :func:`add_space_reading`'s options give."""
    return {"encoding_errors": args.encoding_errors, "duplicates": args.duplicates}


# --------------------------------------------------------------------------- numbers


def _number(kind: Callable[[str], float], test: Callable[[float], bool], expected: str):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if value != value or not test(value):  # NaN fails every test
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    parse.__name__ = expected
    return parse


#: An integer >= 1 (a count, a size, a k).
positive_int = _number(int, lambda v: v >= 1, "a positive integer")
#: An integer >= 0 (a count that may be zero, a seed).
nonnegative_int = _number(int, lambda v: v >= 0, "a non-negative integer")
#: A finite number > 0 (a learning rate, a ratio).
positive_float = _number(float, lambda v: 0 < v < float("inf"), "a positive number")
#: A finite number >= 0.
nonnegative_float = _number(float, lambda v: 0 <= v < float("inf"), "a non-negative number")
#: A share in [0, 1].
fraction = _number(float, lambda v: 0 <= v <= 1, "a number between 0 and 1")


# --------------------------------------------------------------------------- paths


def _readable_file(text: str, what: str = "file") -> str:
    if not text:
        raise argparse.ArgumentTypeError("expected a file name, got ''")
    p = Path(text)
    if not p.exists():
        raise argparse.ArgumentTypeError(f"{text}: {what} not found")
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: is a directory; expected a {what}")
    # a pipe (``<(zcat x.gz)``) or a device is read as a stream: not refused
    if not os.access(p, os.R_OK):
        raise argparse.ArgumentTypeError(f"{text}: permission denied (cannot read it)")
    return text


class PathArg:
    """An argparse ``type`` for a path: parsing keeps the text as given (so a command line
    round-trips through :func:`xlalign.cli.build_parser` anywhere), and
    :func:`check_path_args` applies ``check`` before the command runs."""

    def __init__(self, check: Callable[[str], object], name: str) -> None:
        self.check = check
        self.__name__ = name

    def __call__(self, text: str) -> str:
        return text


def _input_file(text: str) -> None:
    _readable_file(text)


def _input_dir(text: str) -> None:
    if not text:
        raise argparse.ArgumentTypeError("expected a directory name, got ''")
    p = Path(text)
    if not p.exists():
        raise argparse.ArgumentTypeError(f"{text}: directory not found")
    if not p.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: not a directory")


def space_sides(path: str) -> list[str]:
    """The files a space path stands for: ``STEM.npy``, ``STEM.vocab.txt`` and their
    manifest ``STEM.manifest.json`` (:mod:`xlalign.core.formats.space`), or itself."""
    if path.endswith(".npy"):
        stem = path[: -len(".npy")]
        return [path, stem + ".vocab.txt", stem + ".manifest.json"]
    return [path]


def _input_space(text: str) -> None:
    # the manifest is optional on reading (a pair written by hand has none)
    for side in space_sides(text):
        if not side.endswith(".manifest.json"):
            _readable_file(side, "embedding file")


def _writable_parent(text: str, p: Path) -> None:
    """The nearest existing ancestor of ``p`` is a directory this process can write in."""
    parent = p.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{text}: permission denied (cannot write in {parent})")


def _output_file(text: str) -> None:
    if not text:
        raise argparse.ArgumentTypeError("expected a file name, got ''")
    p = Path(text)
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: is a directory; expected a file to write")
    if p.exists() and not p.is_file():
        raise argparse.ArgumentTypeError(f"{text}: not a regular file; expected a file to write")
    _writable_parent(text, p)


def _output_dir(text: str) -> None:
    if not text:
        raise argparse.ArgumentTypeError("expected a directory name, got ''")
    p = Path(text)
    if p.exists():
        if not p.is_dir():
            raise argparse.ArgumentTypeError(f"{text}: exists and is not a directory")
        if not os.access(p, os.W_OK | os.X_OK):
            raise argparse.ArgumentTypeError(f"{text}: permission denied (cannot write in it)")
        return
    _writable_parent(text, p)


#: An existing, readable regular file (not a directory).
input_file = PathArg(_input_file, "FILE")
#: An existing file, or '' for none (an optional input that a job's argv spells so).
optional_input_file = PathArg(lambda text: text and _input_file(text), "FILE")
#: An existing directory.
input_dir = PathArg(_input_dir, "DIR")
#: An embedding space: a word2vec text file, or ``STEM.npy`` beside ``STEM.vocab.txt``.
input_space = PathArg(_input_space, "SPACE")
#: A file to write: not a directory, in a directory that exists or can be made.
output_file = PathArg(_output_file, "FILE")
#: A directory to write in: an existing directory, or one that can be made.
output_dir = PathArg(_output_dir, "DIR")


def keyed(check: Callable[[str], object] | PathArg, sep: str = "=", key: str = "LANG") -> PathArg:
    """``KEY<sep>PATH`` whose path passes ``check`` (a :class:`PathArg` or a function)."""
    inner = check.check if isinstance(check, PathArg) else check

    def parse(text: str) -> None:
        name, found, path = text.partition(sep)
        if not found or not name or not path:
            raise argparse.ArgumentTypeError(f"expected {key}{sep}PATH, got {text!r}")
        inner(path)

    return PathArg(parse, f"{key}{sep}PATH")


def check_arg(option: str, check: Callable[[str], object] | PathArg, value: str) -> str:
    """``check(value)``, its error naming ``option``: a usage error, as if argparse had
    found it (for a path inside ``nargs=3`` or a pair of options checked together)."""
    inner = check.check if isinstance(check, PathArg) else check
    try:
        inner(value)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"argument {option}: {exc}") from None
    return value


def _flat(value: object) -> Iterable[str]:
    if isinstance(value, list | tuple):
        for item in value:
            yield from _flat(item)
    elif isinstance(value, str):
        yield value


def check_path_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Apply the checks of ``parser``'s :class:`PathArg` arguments to the values in
    ``args``, in the parser's order; the first failure raises
    :class:`argparse.ArgumentTypeError` naming the argument (exit status 2)."""
    for action in parser._actions:
        if not isinstance(action.type, PathArg):
            continue
        value = getattr(args, action.dest, None)
        if value is None:
            continue
        name = argparse._get_action_name(action) or action.dest
        for text in _flat(value):
            check_arg(f"{name}", action.type, text)


# --------------------------------------------------------------------------- collisions


def _real(path: str | os.PathLike) -> str:
    return os.path.realpath(os.fspath(path))


def check_paths(
    *,
    inputs: Iterable[str | os.PathLike | None] = (),
    outputs: Iterable[str | os.PathLike | None] = (),
    replaced_dirs: Iterable[str | os.PathLike | None] = (),
    args: argparse.Namespace | None = None,
) -> None:
    """Refuse, before any work, outputs that collide with each other or with an input.

    Paths are compared resolved (:func:`os.path.realpath`: links and ``..`` followed).
    ``outputs`` must name every file the command writes (a ``.npy`` space's
    ``.vocab.txt`` included, see :func:`space_sides`); ``replaced_dirs`` are output
    directories the command builds aside and renames into place, so no input may lie
    inside one (or be one). ``None`` entries (options not given) are ignored. Raises
    :class:`InputError` naming both arguments' paths. With ``args``, the outputs are kept
    there (``args._outputs``) for an error without a path (a full disk) to name.
    """
    ins = {_real(p): str(p) for p in inputs if p is not None}
    seen: dict[str, str] = {}
    for out in outputs:
        if out is None:
            continue
        real = _real(out)
        if real in ins:
            raise InputError(
                f"{out}: output is also an input ({ins[real]}); writing it would destroy "
                "the input: give another output path"
            )
        if real in seen:
            raise InputError(
                f"{out}: given for two outputs (also {seen[real]}); the second would "
                "overwrite the first: give distinct output paths"
            )
        seen[real] = str(out)
    if args is not None:
        args._outputs = list(seen.values())
    for folder in replaced_dirs:
        if folder is None:
            continue
        root = _real(folder)
        for real, given in ins.items():
            if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
                raise InputError(
                    f"{folder}: output directory holds the input {given}, and is replaced "
                    "when the command finishes: give an output directory apart from the inputs"
                )


def unique_keys(option: str, keys: Iterable[str]) -> None:
    """Refuse a key (a language, a task, a pair) given twice to a repeated ``option``:
    one would silently replace the other."""
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            raise argparse.ArgumentTypeError(f"argument {option}: {key!r} given twice")
        seen.add(key)


def checkpoint_minutes(text: str) -> float | None:
    """``--checkpoint-minutes``: minutes >= 0 (0: at every chance), or ``none`` (on
    SIGTERM only), as ``checkpoints.interval_minutes``."""
    if text.strip().lower() in ("none", "null"):
        return None
    return float(nonnegative_float(text))


def add_checkpoint_minutes(p: argparse.ArgumentParser, *, from_config: bool = False) -> None:
    """The ``--checkpoint-minutes`` option of a command that trains (its resume
    checkpoints). ``from_config``: left out, the attribute is absent and the command takes
    its configuration's
    ``checkpoints.interval_minutes`` (:func:`checkpoint_minutes_of`)."""
    default = (
        "the configuration's checkpoints.interval_minutes"
        if from_config
        else f"{DEFAULT_INTERVAL_MINUTES:g}"
    )
    p.add_argument(
        "--checkpoint-minutes",
        type=checkpoint_minutes,
        metavar="M",
        default=argparse.SUPPRESS if from_config else DEFAULT_INTERVAL_MINUTES,
        help="minutes of work between two resume checkpoints in the work directory (0: at "
        f"every chance; none: on SIGTERM only; a shorter run writes none; default: "
        f"{default})",
    )


def checkpoint_minutes_of(args: argparse.Namespace, config: dict[str, object]) -> float | None:
    """``--checkpoint-minutes`` when given, else ``checkpoints.interval_minutes`` of the
    (validated) configuration."""
    if hasattr(args, "checkpoint_minutes"):
        return args.checkpoint_minutes  # type: ignore[no-any-return]
    section = config.get("checkpoints") or {}
    assert isinstance(section, dict)
    return section.get("interval_minutes", DEFAULT_INTERVAL_MINUTES)  # type: ignore[no-any-return]

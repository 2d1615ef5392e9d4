"""``xlalign <command>``: the library's stages outside Snakemake.

Each command runs the same function the workflow's job runs, on explicit files, the way
VecMap and MUSE users run their scripts.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import logging
import os
import signal
import sys

from xlalign.cli import (
    analyses,
    config,
    corpus,
    evaluation,
    learning_curve,
    mapping,
    pretrain,
    resources,
    results,
    static,
    wordalign,
    zeroshot,
)
from xlalign.cli.common import check_path_args
from xlalign.cli.static import x2static_job
from xlalign.core.errors import XlalignError

__all__ = ["build_parser", "main", "x2static_job"]


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error told in one line (the usage is one ``--help`` away)."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``xlalign`` parser: one subcommand per stage, each from its command module."""
    parser = _Parser(prog="xlalign", description=__doc__)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress, no report")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (
        corpus.add_sample,
        corpus.add_segment,
        static.add_extract,
        static.add_x2static,
        learning_curve.add_learning_curve,
        mapping.add_map,
        evaluation.add_bli,
        mapping.add_induce,
        evaluation.add_wordsim,
        mapping.add_split_dictionary,
        evaluation.add_tables,
        corpus.add_parallel,
        wordalign.add_align,
        wordalign.add_aer,
        zeroshot.add_finetune,
        zeroshot.add_retrieve,
        pretrain.add_pretrain,
        results.add_statistics,
        results.add_plots,
        analyses.add_derive,
        analyses.add_derived_pretrain,
        analyses.add_derived_evaluate,
        analyses.add_meta_mono,
        analyses.add_meta_cross,
        analyses.add_analyse,
        analyses.add_eflomal_reference,
        config.add_check_config,
        resources.add_download,
    ):
        add(sub)
    return parser


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of ``command`` in ``parser`` (from :func:`build_parser`)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[command]
    raise KeyError(command)


def _one_line(text: str) -> str:
    """A message on one line: its first line, then the others joined by "; " (the list of a
    configuration's errors)."""
    first, *rest = [part.strip() for part in str(text).splitlines() if part.strip()] or [""]
    return " ".join([first, "; ".join(rest)]) if rest else first


#: OSErrors of a write that fails for want of room or permission on its device.
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})


def _os_error(exc: OSError, args: argparse.Namespace | None) -> str:
    """An OSError as one line naming its path (or, without one, the command's outputs)."""
    what = exc.strerror or _one_line(str(exc)) or type(exc).__name__
    if exc.filename is not None:
        where = str(exc.filename)
        if exc.filename2 is not None:
            where += f" -> {exc.filename2}"
        return f"{where}: {what}"
    outputs = getattr(args, "_outputs", None)
    if outputs and exc.errno in _WRITE_ERRNOS:
        return f"{what} (while writing {', '.join(map(str, outputs))})"
    return what


def main(argv: list[str] | None = None) -> int:
    """Run ``xlalign`` with ``argv`` (default: the command line) and return its exit status.

    0 done; 2 a usage error (an unknown option, a bad number, a path that is not there:
    argparse's message); 1 a refused input (:class:`XlalignError`, or an OSError such as
    a full disk, named with its path); 130 interrupted by Ctrl-C; 143 stopped by SIGTERM
    (:mod:`xlalign.core.interrupt`); 141, silently, when the reader of stdout has gone.
    A user's mistake gives one line on stderr, ``xlalign <cmd>: error: ...``; any other
    exception is a bug and shows its traceback. Interrupted, the atomic writers remove
    their temporaries on the way out.
    """
    from xlalign.core import interrupt

    interrupt.install()
    parser = build_parser()
    command = "xlalign"
    args: argparse.Namespace | None = None
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # usage error (2) or --help (0), already printed
            return exc.code if isinstance(exc.code, int) else 2
        command = f"xlalign {args.command}"
        check_path_args(_subparser(parser, args.command), args)
        logging.basicConfig(
            level=logging.WARNING if args.quiet else logging.INFO,
            format="%(levelname)s %(name)s: %(message)s",
        )
        args.func(args)
    except KeyboardInterrupt:
        print(f"{command}: interrupted", file=sys.stderr)
        return 130
    except interrupt.Preempted as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return interrupt.EXIT_STATUS
    except BrokenPipeError:  # `xlalign ... | head`: the reader left; not an error to tell
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except argparse.ArgumentTypeError as exc:  # an argument checked after parsing
        print(f"{command}: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except XlalignError as exc:
        print(f"{command}: error: {_one_line(str(exc))}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"{command}: error: {_one_line(_os_error(exc, args))}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

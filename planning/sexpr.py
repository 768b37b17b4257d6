"""S-expressions with source positions: the layer under PDDL parsing.

The ``pddl`` package parses well-formed files but reports neither undeclared predicates nor
positions for semantic mistakes. Reading the file once into position-carrying s-expressions
lets asg normalise sloppy files and name ``FILE:LINE:COL`` in every diagnostic; ``parse``
then builds ``pddl``'s objects from these lists, so this is the only pass over the text.
Reader and walkers are iterative, and nesting beyond ``MAX_DEPTH`` is refused, so no input
reaches Python's recursion limit.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from asg.planning.errors import PDDLError, PDDLSyntaxError

# Deeper nesting than this is refused by the reader. Real PDDL nests a dozen levels at most;
# the limit keeps every later walker (asg's, grounding's, the ``pddl`` package's validators,
# which recurse a few Python frames per level) far below Python's recursion limit.
MAX_DEPTH = 100


@dataclass(slots=True)
class Token:
    """One symbol (name, variable, keyword or number) and where it starts (1-based)."""

    text: str
    line: int
    col: int


@dataclass(slots=True)
class SList:
    """A parenthesised list; ``line``/``col`` point at its opening parenthesis."""

    items: list[Node] = field(default_factory=list)
    line: int = 0
    col: int = 0

    def head(self) -> str | None:
        """Lower-cased first symbol, or None when the list is empty or starts with a list."""
        token = self.head_token()
        return token.text.lower() if token is not None else None

    def head_token(self) -> Token | None:
        """The first item when it is a symbol (the token ``head`` reads), else None."""
        first = self.items[0] if self.items else None
        return first if isinstance(first, Token) else None

    def walk(self) -> Iterator[SList]:
        """This list and every nested list, depth first (pre-order, iterative).

        A list's children are read after it has been yielded, so a caller may replace
        ``items`` of the list it was just given (the normaliser does).
        """
        stack: list[SList] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(item for item in reversed(node.items) if isinstance(item, SList))


Node = Token | SList


def read_text(path: str) -> str:
    """Read a PDDL file as text, turning every I/O problem into one clear PDDLError."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise PDDLError("no such file", path) from None
    except IsADirectoryError:
        raise PDDLError("is a directory, not a PDDL file", path) from None
    except PermissionError:
        raise PDDLError("permission denied", path) from None
    except OSError as err:
        raise PDDLError(f"cannot read file: {err.strerror}", path) from None
    nul = data.find(b"\x00")
    if nul >= 0:
        raise PDDLSyntaxError(f"binary data (NUL byte at offset {nul}), not a PDDL text file", path,
                              *_place(data, nul))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise PDDLSyntaxError(
            f"not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start})", path, *_place(data, err.start)
        ) from None


def _place(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (in bytes) of ``offset``."""
    return data.count(b"\n", 0, offset) + 1, offset - data.rfind(b"\n", 0, offset)


# One token: a parenthesis or a run of characters up to whitespace, a parenthesis or a comment.
_TOKEN = re.compile(r"[()]|[^\s();]+")


def tokenize(text: str, path: str | None) -> Iterator[Token]:
    """Yield '(' / ')' / symbol tokens with positions; ``;`` comments are skipped."""
    for number, line in enumerate(text.split("\n"), 1):
        cut = line.find(";")
        if cut >= 0:
            line = line[:cut]
        for match in _TOKEN.finditer(line):
            word = match.group()
            if not word.isprintable():
                raise PDDLSyntaxError(f"unexpected character {word!r}", path, number, match.start() + 1)
            yield Token(word, number, match.start() + 1)


def parse_sexprs(text: str, path: str | None, max_depth: int = MAX_DEPTH) -> list[SList]:
    """Parse the top-level lists of ``text``; unbalanced parentheses raise with their place.

    Iterative, so no input reaches Python's recursion limit; lists nested deeper than
    ``max_depth`` are refused (at the opening parenthesis that goes one level too deep).
    """
    stack: list[SList] = []
    top: list[SList] = []
    for token in tokenize(text, path):
        if token.text == "(":
            if len(stack) >= max_depth:
                raise PDDLSyntaxError(f"nesting deeper than {max_depth} levels (asg's limit)", path,
                                      token.line, token.col)
            stack.append(SList([], token.line, token.col))
        elif token.text == ")":
            if not stack:
                raise PDDLSyntaxError("unbalanced ')': no '(' to close", path, token.line, token.col)
            done = stack.pop()
            (stack[-1].items if stack else top).append(done)
        elif stack:
            stack[-1].items.append(token)
        else:
            raise PDDLSyntaxError(f"unexpected {token.text!r} outside any (define ...)", path,
                                  token.line, token.col)
    if stack:
        opened = stack[-1]
        raise PDDLSyntaxError("unbalanced '(': never closed", path, opened.line, opened.col)
    return top


class _Close:
    """The type of ``_CLOSE``."""


_CLOSE = _Close()  # marks, on an explicit stack, the end of a list's items


def _events(node: Node) -> Iterator[Token | SList | _Close]:
    """Pre-order events of ``node``: each Token, each SList as it opens, ``_CLOSE`` as it closes."""
    stack: list[Token | SList | _Close] = [node]
    while stack:
        item = stack.pop()
        yield item
        if isinstance(item, SList):
            stack.append(_CLOSE)
            stack.extend(reversed(item.items))


def render(node: Node) -> str:
    """Write a node back as PDDL text (lower-case, one line)."""
    out: list[str] = []
    spaced = False  # whether the next item needs a space before it
    for event in _events(node):
        if isinstance(event, _Close):
            out.append(")")
            spaced = True
            continue
        if spaced:
            out.append(" ")
        if isinstance(event, SList):
            out.append("(")
            spaced = False
        else:
            out.append(event.text)
            spaced = True
    return "".join(out)


def render_with_lines(node: SList) -> str:
    """Write ``node`` back keeping every token on its original line.

    Columns match except where normalisation split a glued token.
    """
    out: list[str] = []
    line, col = 1, 1
    for event in _events(node):
        if isinstance(event, _Close):
            at_line, at_col, text = line, col, ")"
        else:
            at_line, at_col = event.line, event.col
            text = "(" if isinstance(event, SList) else event.text
        if at_line > line:
            out.append("\n" * (at_line - line))
            line, col = at_line, 1
        pad = max(at_col - col, 1 if out and not out[-1].endswith(("\n", "(")) else 0)
        out.append(" " * pad + text)
        col += pad + len(text)
    return "".join(out)

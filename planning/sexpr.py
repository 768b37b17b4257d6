"""S-expressions with source positions: the layer under PDDL parsing.

The ``pddl`` package parses well-formed files but reports neither undeclared predicates nor
positions for semantic mistakes. Reading the file once into position-carrying s-expressions
lets asg normalise sloppy files and name ``FILE:LINE:COL`` in every diagnostic.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Union

from asg.planning.errors import PDDLSyntaxError


@dataclass
class Token:
    """One symbol (name, variable, keyword or number) and where it starts (1-based)."""

    text: str
    line: int
    col: int


@dataclass
class SList:
    """A parenthesised list; ``line``/``col`` point at its opening parenthesis."""

    items: list["Node"] = field(default_factory=list)
    line: int = 0
    col: int = 0

    def head(self) -> str | None:
        """Lower-cased first symbol, or None when the list is empty or starts with a list."""
        if self.items and isinstance(self.items[0], Token):
            return self.items[0].text.lower()
        return None

    def walk(self) -> Iterator["SList"]:
        """This list and every nested list, depth first."""
        yield self
        for item in self.items:
            if isinstance(item, SList):
                yield from item.walk()


Node = Union[Token, SList]


def read_text(path: str) -> str:
    """Read a PDDL file as text, turning every I/O problem into one clear PDDLError."""
    from asg.planning.errors import PDDLError

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
        raise PDDLSyntaxError(f"binary data (NUL byte at offset {nul}), not a PDDL text file", path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise PDDLSyntaxError(
            f"not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start})", path
        ) from None


def tokenize(text: str, path: str | None) -> Iterator[Token]:
    """Yield '(' / ')' / symbol tokens with positions; ``;`` comments are skipped."""
    line, col, i, n = 1, 1, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line, col, i = line + 1, 1, i + 1
        elif ch.isspace():
            col, i = col + 1, i + 1
        elif ch == ";":
            while i < n and text[i] != "\n":
                i += 1
        elif ch in "()":
            yield Token(ch, line, col)
            col, i = col + 1, i + 1
        else:
            start, start_col = i, col
            while i < n and not text[i].isspace() and text[i] not in "();":
                i += 1
            col += i - start
            word = text[start:i]
            if not word.isprintable():
                raise PDDLSyntaxError(f"unexpected character {word!r}", path, line, start_col)
            yield Token(word, line, start_col)


def parse_sexprs(text: str, path: str | None) -> list[SList]:
    """Parse the top-level lists of ``text``; unbalanced parentheses raise with their place."""
    stack: list[SList] = []
    top: list[SList] = []
    for token in tokenize(text, path):
        if token.text == "(":
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


def render(node: Node) -> str:
    """Write a node back as PDDL text (lower-case, one line)."""
    if isinstance(node, Token):
        return node.text
    return "(" + " ".join(render(item) for item in node.items) + ")"


def render_with_lines(node: SList) -> str:
    """Write ``node`` back keeping every token on its original line.

    Errors the ``pddl`` parser reports on the result then point at the right line of the
    user's file; columns match except where normalisation split a glued token.
    """
    out: list[str] = []
    line, col = 1, 1

    def emit(text: str, at_line: int, at_col: int) -> None:
        nonlocal line, col
        if at_line > line:
            out.append("\n" * (at_line - line))
            line, col = at_line, 1
        pad = max(at_col - col, 1 if out and not out[-1].endswith(("\n", "(")) else 0)
        out.append(" " * pad + text)
        col += pad + len(text)

    def visit(item: Node) -> None:
        if isinstance(item, Token):
            emit(item.text, item.line, item.col)
            return
        emit("(", item.line, item.col)
        for child in item.items:
            visit(child)
        emit(")", line, col)

    visit(node)
    return "".join(out)

"""What the command needs before jax is imported, so that `stablehlo-bnfold-opt --help`,
`--version`, its usage errors and its start-up never wait for (or are interrupted in)
the import of jax and jaxlib: the pass's name and the one-line form of messages."""

ARGUMENT = "stablehlo-fold-batch-norm"
"""The pass's flag and its name in a pipeline, kebab-case like MLIR's."""


def one_line(text: str) -> str:
    """`text` with every character that is not printable (a newline, a carriage return, a
    form feed, other control characters) written as its escape: messages quote the
    input's names, and a message must stay one line.

    >>> one_line("op 'a\\nb'")
    "op 'a\\\\nb'"
    """
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode() for ch in text)

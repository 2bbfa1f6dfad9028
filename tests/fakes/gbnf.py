"""A llama.cpp grammar (GBNF) read as a Python regular expression, to check what a constrained model could answer.

It reads the part of GBNF that `engine.json_grammar` writes (literals, character classes, rule names, groups,
alternatives and repetitions) for grammars without recursion, which the answer schemas' grammars are.
"""

from __future__ import annotations

import re

__all__ = ["grammar_pattern"]

_TOKEN = re.compile(
    r'\s*(?:(?P<literal>"(?:\\.|[^"\\])*")|(?P<cls>\[(?:\\.|[^\]\\])*\])|(?P<name>[a-zA-Z0-9-]+)'
    r"|(?P<repeat>\{\d+(?:,\d*)?\})|(?P<op>[()|?*+]))"
)


def grammar_pattern(grammar: str) -> re.Pattern[str]:
    """The grammar as one regular expression for its `root` rule."""
    rules = dict(line.split(" ::= ", 1) for line in grammar.splitlines() if line)

    def expand(body: str, depth: int = 0) -> str:
        assert depth < 20, "recursive grammar"
        out, position = [], 0
        while position < len(body.rstrip()):
            token = _TOKEN.match(body, position)
            assert token is not None, f"cannot read {body[position:]!r}"
            position = token.end()
            if token["literal"]:
                text = token["literal"][1:-1].encode().decode("unicode_escape").encode("latin-1").decode()
                out.append(re.escape(text))
            elif token["cls"]:
                out.append(token["cls"])
            elif token["name"]:
                out.append(f"(?:{expand(rules[token['name']], depth + 1)})")
            elif token["op"] == "(":
                out.append("(?:")
            else:
                out.append(token["repeat"] or token["op"])
        return "".join(out)

    return re.compile(expand(rules["root"]))

#!/usr/bin/env python3
"""Writes cpp/tokenizer/unicode_tables.cpp: the code-point tables the
tokenizers need (design-notes §7, "Unicode without a Unicode library").

- The categories: one sorted table of ranges {first code point, flags}; a
  range runs up to the next entry's first code point. Flags follow llama.cpp's
  unicode_cpt_flags (src/unicode.h): one general-category group bit (L, N, P,
  S, M, Z, C, or "undefined" for unassigned code points) plus a White_Space
  bit, so one binary search answers every question a splitter asks.
- Lower case (WordPiece's normaliser): each code point with a simple
  lowercase mapping (UnicodeData.txt field 13) and that mapping, sorted.
- NFD (WordPiece strips accents): each code point whose canonical
  decomposition starts with another code point, and that first code point
  of its full decomposition (the one character llama.cpp keeps), sorted.

Data source, in order of preference:
  1. UnicodeData.txt (--ucd PATH, default /usr/share/unicode/UnicodeData.txt,
     Debian package `unicode-data`): llama.cpp's own generator
     (scripts/gen-unicode-data.py) reads this file.
  2. Python's unicodedata module (always present, but Python 3.11 ships
     Unicode 14.0).
llama.cpp's table is Unicode 15.1. When the source predates 15.1 the script
adds the 15.1 (and, for a 14.0 source, warns about the missing 15.0)
assignments listed below, so the committed table classifies exactly like
llama.cpp's for every code point of 15.0 and 15.1.

Usage:
  python3 tools/gen_unicode_tables.py                # writes cpp/tokenizer/unicode_tables.cpp
  python3 tools/gen_unicode_tables.py --ucd FILE -o OUT
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import unicodedata

MAX_CODEPOINTS = 0x110000

# Flag bits: keep in sync with cpp/tokenizer/unicode.h (same values as
# llama.cpp's unicode_cpt_flags).
UNDEFINED = 0x0001
NUMBER = 0x0002
LETTER = 0x0004
SEPARATOR = 0x0008
MARK = 0x0010
PUNCTUATION = 0x0020
SYMBOL = 0x0040
CONTROL = 0x0080
WHITESPACE = 0x0100

CATEGORY_TO_FLAG = {
    "Cn": UNDEFINED, "Cc": CONTROL, "Cf": CONTROL, "Co": CONTROL, "Cs": CONTROL,
    "Ll": LETTER, "Lm": LETTER, "Lo": LETTER, "Lt": LETTER, "Lu": LETTER,
    "Mc": MARK, "Me": MARK, "Mn": MARK,
    "Nd": NUMBER, "Nl": NUMBER, "No": NUMBER,
    "Pc": PUNCTUATION, "Pd": PUNCTUATION, "Pe": PUNCTUATION, "Pf": PUNCTUATION,
    "Pi": PUNCTUATION, "Po": PUNCTUATION, "Ps": PUNCTUATION,
    "Sc": SYMBOL, "Sk": SYMBOL, "Sm": SYMBOL, "So": SYMBOL,
    "Zl": SEPARATOR, "Zp": SEPARATOR, "Zs": SEPARATOR,
}

# White_Space property (PropList.txt), the same list llama.cpp hard-codes.
WHITESPACE_CPTS = (list(range(0x0009, 0x000D + 1)) + list(range(0x2000, 0x200A + 1)) +
                   [0x0020, 0x0085, 0x00A0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000])

# Unicode 15.1 additions (first, last, category): CJK Extension I, four
# ideographic description characters and one CJK stroke.
UNICODE_15_1_ADDITIONS = [
    (0x2EBF0, 0x2EE5D, "Lo"),
    (0x2FFC, 0x2FFF, "So"),
    (0x31EF, 0x31EF, "So"),
]


def read_ucd(path: str) -> tuple[list[str], dict[int, int], dict[int, list[int]]]:
    """Categories of every code point, simple lowercase mappings, canonical decompositions."""
    cats = ["Cn"] * MAX_CODEPOINTS
    lower: dict[int, int] = {}
    decomposition: dict[int, list[int]] = {}
    first = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split(";")
            if len(fields) < 14:
                continue
            cpt = int(fields[0], 16)
            name, cat = fields[1], fields[2].strip()
            if name.endswith(", First>"):
                first = cpt
                continue
            if name.endswith(", Last>"):
                for c in range(first, cpt + 1):
                    cats[c] = cat
                first = None
                continue
            cats[cpt] = cat
            if fields[13]:
                lower[cpt] = int(fields[13], 16)
            if fields[5] and not fields[5].startswith("<"):  # canonical, not compatibility
                decomposition[cpt] = [int(x, 16) for x in fields[5].split()]
    return cats, lower, decomposition


# Hangul syllables decompose by formula (Unicode 3.12): the first jamo.
HANGUL_FIRST, HANGUL_COUNT, HANGUL_L, HANGUL_PER_L = 0xAC00, 11172, 0x1100, 21 * 28


def nfd_first(cpt: int, decomposition: dict[int, list[int]]) -> int:
    """The first code point of cpt's full canonical decomposition."""
    if HANGUL_FIRST <= cpt < HANGUL_FIRST + HANGUL_COUNT:
        return HANGUL_L + (cpt - HANGUL_FIRST) // HANGUL_PER_L
    while cpt in decomposition:
        cpt = decomposition[cpt][0]
    return cpt


def write_table(out: list[str], c_type: str, name: str, items: list[str], count_name: str = "") -> None:
    """A C array `name` of `c_type` with the initialisers `items`, lines up to 100 wide, and its
    count (`count_name`, default name + "Count")."""
    out.append(f"const {c_type} {name}[{len(items)}] = {{")
    line = " "
    for item in items:
        item = f" {item},"
        if len(line) + len(item) > 100:
            out.append(line)
            line = " "
        line += item
    out.append(line)
    out.append("};")
    out.append(f"const size_t {count_name or name + 'Count'} = {len(items)};")


def write_pairs(out: list[str], name: str, pairs: list[tuple[int, int]]) -> None:
    write_table(out, "CptPair", name, [f"{{0x{a:06X}, 0x{b:06X}}}" for a, b in pairs])


def from_python() -> tuple[list[str], dict[int, int], dict[int, list[int]]]:
    cats = [unicodedata.category(chr(c)) for c in range(MAX_CODEPOINTS)]
    lower, decomposition = {}, {}
    for c in range(MAX_CODEPOINTS):
        low = chr(c).lower()
        if len(low) == 1 and ord(low) != c:
            lower[c] = ord(low)
        d = unicodedata.decomposition(chr(c))
        if d and not d.startswith("<"):
            decomposition[c] = [int(x, 16) for x in d.split()]
    return cats, lower, decomposition


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ucd", default="/usr/share/unicode/UnicodeData.txt",
                    help="UnicodeData.txt to read (falls back to Python's unicodedata if absent)")
    ap.add_argument("-o", "--output", default=os.path.join(here, "..", "cpp", "tokenizer", "unicode_tables.cpp"))
    args = ap.parse_args()

    if os.path.exists(args.ucd):
        cats, lower, decomposition = read_ucd(args.ucd)
        source = "UnicodeData.txt"
        readme = os.path.join(os.path.dirname(args.ucd), "ReadMe.txt")
        if os.path.exists(readme):
            with open(readme, encoding="utf-8", errors="replace") as f:
                m = re.search(r"Version (\d+\.\d+\.\d+)", f.read())
            if m:
                source += f" {m.group(1)}"
    else:
        print(f"warning: {args.ucd} not found; using Python's unicodedata "
              f"(Unicode {unicodedata.unidata_version})", file=sys.stderr)
        cats, lower, decomposition = from_python()
        source = f"Python unicodedata {unicodedata.unidata_version}"

    # Kawi (U+11F00), new in 15.0: its absence means a pre-15.0 source.
    if cats[0x11F04] == "Cn":
        print("warning: source predates Unicode 15.0; code points assigned in 15.0 "
              "will differ from llama.cpp's table", file=sys.stderr)
    if cats[0x2EBF0] == "Cn":
        for first, last, cat in UNICODE_15_1_ADDITIONS:
            for c in range(first, last + 1):
                cats[c] = cat
        source += " + Unicode 15.1 additions"

    flags = [CATEGORY_TO_FLAG[c] for c in cats]
    for c in WHITESPACE_CPTS:
        flags[c] |= WHITESPACE

    ranges = [(0, flags[0])]
    for cpt in range(1, MAX_CODEPOINTS):
        if flags[cpt] != ranges[-1][1]:
            ranges.append((cpt, flags[cpt]))

    out = []
    out.append("// GENERATED by tools/gen_unicode_tables.py -- do not edit by hand.")
    out.append(f"// Source: {source}.")
    out.append("// Regenerate: python3 tools/gen_unicode_tables.py  (reads /usr/share/unicode/UnicodeData.txt")
    out.append("// from Debian's unicode-data package when present, else Python's unicodedata).")
    out.append("//")
    out.append("// Code-point flags as llama.cpp's unicode_cpt_flags: one category group bit plus")
    out.append("// White_Space. Entry i covers [first_i, first_{i+1}); the last runs to U+10FFFF.")
    out.append("// Then the lowercase and NFD tables of the WordPiece normaliser.")
    out.append('#include "tokenizer/unicode.h"')
    out.append("")
    out.append("namespace wllm::unicode {")
    out.append("")
    write_table(out, "CptRange", "kCptRanges", [f"{{0x{first:06X}, 0x{fl:04X}}}" for first, fl in ranges],
                "kCptRangeCount")
    out.append("")
    out.append("// Simple lowercase mappings {code point, lowercase}.")
    write_pairs(out, "kLowercase", sorted(lower.items()))
    out.append("")
    out.append("// {code point, first code point of its canonical decomposition} where they differ.")
    nfd = [(c, nfd_first(c, decomposition)) for c in sorted(decomposition)]
    nfd += [(c, nfd_first(c, decomposition)) for c in range(HANGUL_FIRST, HANGUL_FIRST + HANGUL_COUNT)]
    write_pairs(out, "kNfdFirst", sorted(p for p in nfd if p[0] != p[1]))
    out.append("")
    out.append("}  // namespace wllm::unicode")
    with open(args.output, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    print(f"wrote {len(ranges)} ranges to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

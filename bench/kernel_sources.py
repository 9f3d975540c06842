#!/usr/bin/env python3
"""Compare the kernels two builds compile for the same tests: is a change invisible to them?

CubeCL's compilation logger (`cubecl.toml`: `[compilation.logger] level = "full"`) writes each
kernel it compiles as a block: its name, its `KernelId` (comptime arguments, cube size,
address type) and its source. Run the same tests with each build (`bench/kernel_diff.sh` does),
then

    kernel_sources.py BASE.log NEW.log

prints the kernels (name + id) only one build compiled, and those both compiled whose sources
differ (a unified diff of the first few). Exit status 0 when every kernel matches, 1 otherwise.

Through wgpu the source is WGSL (or SPIR-V's dump), made from CubeCL's IR, which every runtime
compiles from: the same WGSL for the same id means the same IR, so the same CUDA and SPIR-V
too. The hash CubeCL appends to an entry point's name (`_db81550d`) is left out, as are
the variable numbers' (`v85`, `shared_v85`) when `--renumber` is given: a refactor that
moves code without changing it can renumber the IR's variables.
"""

import argparse
import difflib
import re
import sys

START = "[START_KERNEL_COMPILATION]"
END = "[END_KERNEL_COMPILATION]"


def blocks(path):
    """(name + id, source) of every kernel in a compilation log, in order."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    out = []
    for chunk in text.split(START)[1:]:
        chunk = chunk.split(END)[0]
        head, _, source = chunk.partition("source:\n")
        out.append((head.strip(), source.strip()))
    return out


def normalise(source, renumber):
    source = re.sub(r"(fn [A-Za-z0-9_]+?)_[0-9a-f]{8}\(", r"\1(", source)
    if renumber:
        seen = {}

        def number(m):
            return m.group(1) + seen.setdefault(m.group(0), str(len(seen)))

        source = re.sub(r"\b(shared_v|v)[0-9]+\b", number, source)
    return source


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("base")
    p.add_argument("new")
    p.add_argument("--renumber", action="store_true", help="ignore variable numbering")
    p.add_argument("--show", type=int, default=2, help="diffs to print")
    args = p.parse_args()
    base = {}
    for key, source in blocks(args.base):
        base.setdefault(key, normalise(source, args.renumber))
    new = {}
    for key, source in blocks(args.new):
        new.setdefault(key, normalise(source, args.renumber))
    name = lambda key: key.splitlines()[0].removeprefix("name: ")
    only_base = [k for k in base if k not in new]
    only_new = [k for k in new if k not in base]
    differ = [k for k in base if k in new and base[k] != new[k]]
    same = len(base) - len(only_base) - len(differ)
    print(f"{len(base)} kernels in {args.base}, {len(new)} in {args.new}: {same} the same")
    for label, keys in (("only in base", only_base), ("only in new", only_new), ("differ", differ)):
        if keys:
            print(f"{label}: {len(keys)}")
            for k in keys:
                print(f"  {name(k)}")
    for k in differ[: args.show]:
        print(f"--- {name(k)}")
        diff = difflib.unified_diff(
            base[k].splitlines(), new[k].splitlines(), "base", "new", lineterm="", n=2
        )
        for line in list(diff)[:80]:
            print(line)
    if only_base or only_new:
        # Show how a kernel's id changed where the same name appears on both sides.
        for k in only_base[: args.show]:
            twins = [n for n in only_new if name(n) == name(k)]
            if twins:
                print(f"--- id of {name(k)}")
                diff = difflib.unified_diff(
                    k.splitlines(), twins[0].splitlines(), "base", "new", lineterm="", n=1
                )
                for line in diff:
                    print(line)
    return 0 if not (only_base or only_new or differ) else 1


if __name__ == "__main__":
    sys.exit(main())

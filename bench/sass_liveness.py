#!/usr/bin/env python3
"""Live registers along a kernel's SASS, from Nsight Compute's source page.

Input: `ncu ... --section SourceCounters --page source --print-source sass --csv` (gzip or
plain). A backward pass over the listing in address order (branches ignored: exact for the
straight-line, unrolled stretches where register peaks live; loops are undercounted) gives the
registers live before each instruction. Predicated definitions do not end a register's life.

    bench/sass_liveness.py FILE [STEP]      # per STEP instructions: peak live, stalls, top ops
    bench/sass_liveness.py FILE STEP AT     # ... and what is live at instruction AT, each
                                            # register with the instruction that last set it

`bench/results/h200/22-b/README.md` is what it found first: per held key, the counter's value
and the popcount kept apart through a onesweep pass's prefix.
"""
import csv
import gzip
import re
import sys

# Opcodes with no register destination: every register operand is read.
NO_DEST = {
    "ST", "STS", "STG", "STL", "RED", "BRA", "BAR", "EXIT", "BSYNC", "BSSY", "WARPSYNC",
    "NOP", "CALL", "RET", "MEMBAR", "ERRBAR", "CCTL", "DEPBAR", "YIELD", "NANOSLEEP", "BPT",
    "JMP",
}
# Opcodes whose `.64` / `.128` / `.WIDE` suffix widens the destination.
WIDE_DEST = {"LDG", "LDS", "LDL", "LD", "LDC", "ATOM", "ATOMS", "LDSM"}


def registers(text):
    """Every general register an operand string names (`R4.64` is R4 and R5)."""
    out = []
    for m in re.finditer(r"\bR(\d+)(\.64|\.128)?", text):
        n = int(m.group(1))
        out += range(n, n + {None: 1, ".64": 2, ".128": 4}[m.group(2)])
    return out


def dest_width(opcode):
    base = opcode.split(".")[0]
    if base == "IMAD" and ".WIDE" in opcode:
        return 2
    if base not in WIDE_DEST:
        return 1
    return 4 if ".128" in opcode else 2 if ".64" in opcode else 1


def read_listing(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        lines = f.readlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"Address"'))
    reader = csv.reader(lines[start:])
    header = next(reader)
    source = header.index("Source")
    stalls = header.index("Warp Stall Sampling (All Samples)")
    out = []
    for row in reader:
        if len(row) <= source:
            continue
        text = row[source].strip()
        m = re.match(r"@!?U?P\w+\s+", text)
        predicated = bool(m)
        body = text[m.end():] if m else text
        opcode, _, args = body.partition(" ")
        operands = [a.strip() for a in args.split(",")]
        defs, uses = [], registers(args)
        if opcode.split(".")[0] not in NO_DEST and operands and re.match(r"R\d+", operands[0]):
            n = int(re.match(r"R(\d+)", operands[0]).group(1))
            defs = list(range(n, n + dest_width(opcode)))
            uses = registers(",".join(operands[1:]))
        out.append((text, defs, uses, predicated, float(row[stalls] or 0)))
    return out


def live_sets(listing):
    live, sets = set(), [None] * len(listing)
    for i in range(len(listing) - 1, -1, -1):
        _, defs, uses, predicated, _ = listing[i]
        if not predicated:
            live -= set(defs)
        live |= set(uses)
        sets[i] = set(live)
    return sets


def main():
    listing = read_listing(sys.argv[1])
    step = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    sets = live_sets(listing)
    for i in range(0, len(listing), step):
        chunk = listing[i:i + step]
        ops = {}
        for text, *_ in chunk:
            op = re.sub(r"@!?U?P\w+\s+", "", text).split()[0].split(".")[0]
            ops[op] = ops.get(op, 0) + 1
        top = sorted(ops.items(), key=lambda x: -x[1])[:5]
        peak = max(len(s) for s in sets[i:i + step])
        stall = sum(x[4] for x in chunk)
        print(f"{i:5d} live max {peak:3d} stall {stall:7.0f} {top}")
    if len(sys.argv) > 3:
        at = int(sys.argv[3])
        print(f"live at {at}: {len(sets[at])}  {listing[at][0]}")
        for r in sorted(sets[at]):
            j = at - 1
            while j >= 0 and r not in listing[j][1]:
                j -= 1
            print(f"R{r}: set at {j}: {listing[j][0] if j >= 0 else '?'}")


if __name__ == "__main__":
    main()

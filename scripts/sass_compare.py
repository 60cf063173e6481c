#!/usr/bin/env python3
"""Whether two builds' kernels are the same machine code: `cuobjdump -sass` listings of two libraries (or objects),
compared function by function. Anonymous-namespace names (a per-build hash) are normalised; a function whose only
differences are constant-bank addresses (kernel parameters moved by a changed struct) is reported as such.
  cuobjdump -sass A/libflashseek.a > a.txt; cuobjdump -sass B/libflashseek.a > b.txt
  python3 scripts/sass_compare.py a.txt b.txt
Prints the counts (identical, parameter offsets only, different, only in one) and the names of the last three."""
import re
import sys

_ANON = re.compile(r"sm90\d+_GLOBAL__N__.*?_cu_[0-9a-f]+(_\d+)?")
_CONST = re.compile(r"c\[0x0\]\[0x[0-9a-f]+\]")


def functions(text):
    """{normalised name: [instruction text]} of a cuobjdump -sass listing."""
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"\s+Function : (\S+)", line)
        if m:
            cur = _ANON.sub("sm90ANON", m.group(1))
            out.setdefault(cur, [])
            continue
        m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", line)
        if m and cur is not None:
            out[cur].append(m.group(1))
    return out


def compare(a, b):
    """(identical, offsets_only, different, only_a, only_b): name lists."""
    result = ([], [], [], sorted(set(a) - set(b)), sorted(set(b) - set(a)))
    for name in sorted(set(a) & set(b)):
        x, y = a[name], b[name]
        if x == y:
            result[0].append(name)
        elif [_CONST.sub("c[P]", i) for i in x] == [_CONST.sub("c[P]", i) for i in y]:
            result[1].append(name)
        else:
            result[2].append(name)
    return result


def main():
    a, b = (functions(open(p, errors="replace").read()) for p in sys.argv[1:3])
    same, offsets, different, only_a, only_b = compare(a, b)
    print(f"{len(same)} identical, {len(offsets)} differ only in parameter offsets, {len(different)} different, "
          f"{len(only_a)} only in the first, {len(only_b)} only in the second")
    for label, names in (("different", different), ("only in the first", only_a), ("only in the second", only_b)):
        for name in names:
            print(f"  {label}: {name}")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())

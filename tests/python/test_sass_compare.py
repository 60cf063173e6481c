"""scripts/sass_compare.py: functions of two cuobjdump listings sorted into identical, parameter offsets only,
different and one-sided, with anonymous-namespace hashes normalised."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "sass_compare.py"
_spec = importlib.util.spec_from_file_location("sass_compare", SCRIPT)
sc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sc)


def _listing(funcs):
    lines = []
    for name, body in funcs.items():
        lines.append(f"\t\tFunction : {name}")
        lines += [f"        /*{16 * i:04x}*/                   {ins} ;   /* 0x0 */" for i, ins in enumerate(body)]
    return "\n".join(lines)


def test_sorts_functions_by_how_they_differ():
    a = sc.functions(_listing({
        "k_same": ["MOV R1, c[0x0][0x28]", "EXIT"],
        "k_params": ["LDC R2, c[0x0][0x210]", "EXIT"],
        "k_code": ["IADD3 R1, R2, R3, RZ", "EXIT"],
        "_ZN9flashseek4sm9049_GLOBAL__N__06c24295_10_combine_cu_48cb0dfe_2363819combine_kernelEv": ["EXIT"],
        "k_gone": ["EXIT"]}))
    b = sc.functions(_listing({
        "k_same": ["MOV R1, c[0x0][0x28]", "EXIT"],
        "k_params": ["LDC R2, c[0x0][0x290]", "EXIT"],
        "k_code": ["IMAD R1, R2, R3, RZ", "EXIT"],
        "_ZN9flashseek4sm9049_GLOBAL__N__77aa0011_10_combine_cu_99ff0abc_2363819combine_kernelEv": ["EXIT"],
        "k_new": ["EXIT"]}))
    same, offsets, different, only_a, only_b = sc.compare(a, b)
    assert same == ["_ZN9flashseek4sm90ANONcombine_kernelEv", "k_same"]
    assert offsets == ["k_params"]
    assert different == ["k_code"]
    assert only_a == ["k_gone"] and only_b == ["k_new"]

"""PNG plots (matplotlib, Agg): speedup per scenario grouped by family, and the fraction of the roofline floor."""

from __future__ import annotations

from pathlib import Path
from typing import List, Sequence


def _grouped(records: Sequence[dict], key: str):
    rows = sorted((r for r in records if r.get(key) is not None), key=lambda r: (r["family"], r[key]))
    fams = []
    for r in rows:
        if not fams or fams[-1] != r["family"]:
            fams.append(r["family"])
    return rows, fams


def _bar(records: Sequence[dict], key: str, title: str, ylabel: str, path: Path, log: bool, ref_line: float):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, fams = _grouped(records, key)
    if not rows:
        return False
    cmap = plt.get_cmap("tab20")
    colors = {f: cmap(i % 20) for i, f in enumerate(fams)}
    fig, ax = plt.subplots(figsize=(max(8, 0.09 * len(rows) + 3), 5))
    ax.bar(range(len(rows)), [r[key] for r in rows], color=[colors[r["family"]] for r in rows], width=0.85)
    ax.axhline(ref_line, color="black", linewidth=0.8, linestyle="--")
    if log:
        ax.set_yscale("log")
    ax.set_xticks([])
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors[f]) for f in fams]
    ax.legend(handles, fams, fontsize=7, ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_plots(out_dir: Path, records: Sequence[dict]) -> List[str]:
    """Writes speedup.png and roofline.png into out_dir; returns the names written."""
    written = []
    if _bar(records, "speedup", "Speedup per scenario (fastest comparable baseline / flashseek), by family",
            "speedup (log)", out_dir / "speedup.png", log=True, ref_line=1.0):
        written.append("speedup.png")
    if _bar(records, "roofline_frac", "Fraction of the roofline floor (floor / measured time), by family",
            "roofline fraction", out_dir / "roofline.png", log=False, ref_line=1.0):
        written.append("roofline.png")
    return written

"""The benchmark's bar chart: each system's latency over the best peer's, per case.

With matplotlib: grouped bars on a log axis, a line at 1 (the best peer). Without it (the GPU
machine may lack it) the same chart as horizontal bars is rasterised here — a 3x5 pixel font,
zlib and struct — so a PNG is always written. Bars past 4x are cut at 4x with their value
printed.
"""

from __future__ import annotations

import struct
import zlib

COLORS = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
          (140, 86, 75), (227, 119, 194)]
CUT = 4.0


def ratios(entries: list[dict], systems: list[str]) -> list[tuple[str, list]]:
    """[(case label, [ratio or None per system])], ratio = median / best peer's median."""
    out = []
    for e in entries:
        best = e.get("best_peer_ms")
        row = []
        for s in systems:
            v = e["systems"][s]
            row.append(v["median_ms"] / best if best and v.get("available") else None)
        out.append((f"{e['workload']} b{e['batch']}", row))
    return out


def write(path: str, entries: list[dict], systems: list[str], labels: dict) -> str:
    """Writes the chart; returns how."""
    data = ratios(entries, systems)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        write_raster(path, data, [labels[s] for s in systems])
        return f"{path} (no matplotlib: built-in raster)"
    try:
        write_matplotlib(path, data, systems, labels, plt, matplotlib)
        return f"{path} (matplotlib)"
    except Exception as e:  # an older matplotlib, say: the chart must still be written
        write_raster(path, data, [labels[s] for s in systems])
        return f"{path} (matplotlib failed: {type(e).__name__}: {e}; built-in raster)"


def write_matplotlib(path: str, data, systems: list[str], labels: dict, plt,
                     matplotlib) -> None:
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(data)), 4.5))
    width = 0.8 / len(systems)
    for i, s in enumerate(systems):
        xs = [k + (i - len(systems) / 2 + 0.5) * width for k in range(len(data))]
        ys = [r[i] if r[i] is not None else float("nan") for _, r in data]
        bars = ax.bar(xs, ys, width, label=labels[s], color=[c / 255 for c in COLORS[i % 7]])
        ax.bar_label(bars, fmt="%.2f", fontsize=5, rotation=90, padding=1)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xticks(range(len(data)))
    ax.set_xticklabels([d[0] for d in data], rotation=30, ha="right")
    ax.set_ylabel("latency / best peer (lower is better)")
    ax.legend(fontsize=7, ncol=4)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# 3x5 glyphs, rows top to bottom, '1' a pixel.
FONT = {
    "0": "111101101101111", "1": "010110010010111", "2": "111001111100111",
    "3": "111001111001111", "4": "101101111001001", "5": "111100111001111",
    "6": "111100111101111", "7": "111001010010010", "8": "111101111101111",
    "9": "111101111001111", "a": "010101111101101", "b": "110101110101110",
    "c": "011100100100011", "d": "110101101101110", "e": "111100110100111",
    "f": "111100110100100", "g": "011100101101011", "h": "101101111101101",
    "i": "111010010010111", "j": "001001001101010", "k": "101101110101101",
    "l": "100100100100111", "m": "101111111101101", "n": "110101101101101",
    "o": "010101101101010", "p": "110101110100100", "q": "010101101110011",
    "r": "110101110101101", "s": "011100010001110", "t": "111010010010010",
    "u": "101101101101111", "v": "101101101101010", "w": "101101111111101",
    "x": "101101010101101", "y": "101101010010010", "z": "111001010100111",
    ".": "000000000000010", "-": "000000111000000", "_": "000000000000111",
    "/": "001001010100100", "(": "010100100100010", ")": "010001001001010",
    ":": "000010000010000", " ": "000000000000000",
}


class Canvas:
    def __init__(self, w: int, h: int):
        self.w, self.h = w, h
        self.px = bytearray([255] * (w * h * 3))

    def rect(self, x0: int, y0: int, x1: int, y1: int, rgb) -> None:
        for y in range(max(0, y0), min(self.h, y1)):
            row = y * self.w * 3
            for x in range(max(0, x0), min(self.w, x1)):
                self.px[row + 3 * x: row + 3 * x + 3] = bytes(rgb)

    def text(self, x: int, y: int, s: str, scale: int = 2, rgb=(0, 0, 0)) -> None:
        for ch in s.lower():
            glyph = FONT.get(ch, FONT[" "])
            for i, bit in enumerate(glyph):
                if bit == "1":
                    gx, gy = x + (i % 3) * scale, y + (i // 3) * scale
                    self.rect(gx, gy, gx + scale, gy + scale, rgb)
            x += 4 * scale

    def png(self) -> bytes:
        raw = b"".join(b"\x00" + bytes(self.px[y * self.w * 3:(y + 1) * self.w * 3])
                       for y in range(self.h))

        def chunk(tag: bytes, data: bytes) -> bytes:
            return (struct.pack(">I", len(data)) + tag + data
                    + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))

        header = struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0)
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def write_raster(path: str, data: list[tuple[str, list]], names: list[str]) -> None:
    bar_h, gap, left, plot_w = 10, 14, 190, 520
    n = len(names)
    legend_h = 16 * ((n + 3) // 4) + 30
    height = legend_h + len(data) * (n * bar_h + gap) + 20
    c = Canvas(left + plot_w + 90, height)
    c.text(8, 6, "latency / best peer (lower is better), bars cut at 4x", 2)
    for i, name in enumerate(names):
        x, y = 8 + (i % 4) * 170, 26 + 16 * (i // 4)
        c.rect(x, y, x + 12, y + 10, COLORS[i % 7])
        c.text(x + 18, y, name, 2)
    scale = plot_w / CUT
    y = legend_h
    for label, row in data:
        c.text(8, y + 2, label, 2)
        for i, r in enumerate(row):
            if r is None:
                c.text(left + 4, y, "n/a", 1, (120, 120, 120))
            else:
                w = int(min(r, CUT) * scale)
                c.rect(left, y, left + max(w, 1), y + bar_h - 2, COLORS[i % 7])
                c.text(left + w + 4, y + 1, f"{r:.2f}", 1)
            y += bar_h
        y += gap
    one = left + int(scale)
    c.rect(one, legend_h - 4, one + 1, height - 10, (0, 0, 0))
    with open(path, "wb") as f:
        f.write(c.png())

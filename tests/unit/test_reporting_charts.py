"""The report's charts: where a value lands, what a mark says, and that a name stays text.

Every chart is parsed back as XML (an SVG that is not well-formed would be a broken chart, or
an escape), and its coordinates are checked against the geometry worked out by hand: a row is
180 px wide with a 14 px margin on each side, so its scale runs from x = 14 to x = 166.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from pytest_plugin_evals.reporting import charts
from pytest_plugin_evals.reporting.charts import Estimate, Series

HOSTILE = "</title><script>alert(1)</script><title>\"quoted\" & 'single' <img src=x onerror=1>"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def classes(element: ET.Element) -> set[str]:
    return set((element.get("class") or "").split())


def find(root: ET.Element, tag: str, *wanted: str) -> list[ET.Element]:
    return [e for e in root.iter(tag) if set(wanted) <= classes(e)]


def test_the_row_geometry_is_the_one_the_table_is_laid_out_for() -> None:
    assert (charts.ROW_WIDTH, charts.ROW_HEIGHT, charts.MARGIN) == (180, 22, 14)
    assert (charts.SCORES.left, charts.SCORES.right) == (14, 166)


def test_a_score_interval_maps_to_its_x_coordinates() -> None:
    root = parse(charts.score_row("c", Estimate(0.5, (0.1, 0.9)), two_arm=False))
    (line,) = find(root, "line", "ci", "with")
    # 0.1 and 0.9 of the way from 14 to 166: 14 + 15.2 and 14 + 136.8.
    assert (float(line.get("x1", "")), float(line.get("x2", ""))) == (29.2, 150.8)
    (dot,) = find(root, "circle", "mark", "with")
    assert float(dot.get("cx", "")) == 90.0
    (caps,) = find(root, "path", "cap", "with")
    assert caps.get("d") == "M29.2 8V14M150.8 8V14"  # a cap at each end, on the one row


def test_with_and_without_sit_on_two_lines_with_their_own_intervals() -> None:
    root = parse(
        charts.score_row("c", Estimate(1.0, (0.57, 1.0)), Estimate(0.0, (0.0, 0.43)), threshold=0.8)
    )
    (with_line,) = find(root, "line", "ci", "with")
    (without_line,) = find(root, "line", "ci", "without")
    assert float(with_line.get("y1", "")) < float(without_line.get("y1", ""))
    assert float(with_line.get("x1", "")) == pytest.approx(14 + 0.57 * 152, abs=0.05)
    assert float(without_line.get("x2", "")) == pytest.approx(14 + 0.43 * 152, abs=0.05)
    (ring,) = find(root, "circle", "mark", "without")
    assert float(ring.get("cx", "")) == 14.0
    (threshold,) = find(root, "path", "threshold")
    assert threshold.get("d") == "M135.6 0V22"  # 14 + 0.8 * 152
    title = root.findtext("title") or ""
    assert title == "c: with plugin 100% (95% 57% to 100%); without plugin 0% (95% 0% to 43%)"


def test_values_outside_the_scale_are_drawn_at_its_edge() -> None:
    root = parse(charts.score_row("c", Estimate(1.2, (-0.3, 1.5)), two_arm=False))
    (line,) = find(root, "line", "ci")
    assert (line.get("x1"), line.get("x2")) == ("14", "166")


def test_a_delta_and_its_interval_against_the_line_at_zero() -> None:
    root = parse(charts.delta_row("c", Estimate(0.25, (-0.5, 0.75)), False))
    (zero,) = find(root, "path", "zero")
    assert zero.get("d") == "M90 0V22"  # 0 is the middle of -1..+1
    (line,) = find(root, "line", "ci", "delta")
    # -0.5 is a quarter of the way from -1 to +1, 0.75 seven eighths.
    assert (float(line.get("x1", "")), float(line.get("x2", ""))) == (52.0, 147.0)
    (mark,) = find(root, "rect", "mark", "delta")
    assert float(mark.get("x", "")) + 4 == 109.0  # the square is centred on 0.25
    assert "sig" not in classes(mark)
    assert (root.findtext("title") or "").endswith(
        "Δ +25.0 pts (95% -50.0 pts to +75.0 pts), not significant"
    )


@pytest.mark.parametrize(
    ("estimate", "significant", "expected"),
    [
        (Estimate(0.6, (0.2, 0.9)), True, {"sig", "up"}),
        (Estimate(-0.6, (-0.9, -0.2)), True, {"sig", "down"}),
        (Estimate(0.6, (-0.1, 0.9)), False, set()),
        (Estimate(0.6, None), True, set()),  # no interval, nothing to be significant with
    ],
)
def test_a_significant_delta_is_marked_with_its_direction(
    estimate: Estimate, significant: bool, expected: set[str]
) -> None:
    (mark,) = find(parse(charts.delta_row("c", estimate, significant)), "rect", "mark")
    assert classes(mark) & {"sig", "up", "down"} == expected


def test_a_case_without_delta_has_no_mark_but_says_why() -> None:
    root = parse(charts.delta_row("c", None, None, note="not comparable"))
    assert not find(root, "rect", "mark")
    assert root.findtext("title") == "c: Δ — (not comparable)"


def test_the_suite_mean_is_a_diamond_across_its_interval() -> None:
    root = parse(charts.mean_row("Suite", Estimate(0.1, (-0.2, 0.4)), False))
    (diamond,) = find(root, "polygon", "mark", "mean")
    xs = [float(p.split(",")[0]) for p in (diamond.get("points") or "").split()]
    assert (min(xs), max(xs)) == (74.8, 120.4)  # x(-0.2), x(0.4)
    assert "sig" not in classes(diamond)
    up = find(parse(charts.mean_row("Suite", Estimate(0.3, (0.1, 0.5)), True)), "polygon")
    assert {"sig", "up"} <= classes(up[0])


def test_a_case_name_in_a_title_is_text() -> None:
    for svg in (
        charts.score_row(HOSTILE, Estimate(0.5, (0.1, 0.9)), Estimate(0.2, (0.0, 0.6))),
        charts.delta_row(HOSTILE, Estimate(0.3, (0.1, 0.5)), True),
        charts.delta_row(HOSTILE, None, None, note=HOSTILE),
        charts.strip(HOSTILE, [Series(HOSTILE, "with", (1.0, 2.0))], 3.0, charts.seconds),
    ):
        root = parse(svg)  # well-formed: the name closed no element
        assert (root.findtext("title") or "").startswith(f"{HOSTILE}: ")
        assert not list(root.iter("script")) and not list(root.iter("img"))
        assert "<script>" not in svg and "onerror=1>" not in svg
        assert [child.tag for child in root].count("title") == 1


def test_a_series_label_and_class_in_a_histogram_are_text() -> None:
    svg = charts.histogram(HOSTILE, [Series(HOSTILE, 'with" onload="x', (1.0,))], charts.seconds)
    root = parse(svg)
    (bar,) = find(root, "rect", "bin")
    assert bar.get("class") == 'bin with" onload="x'  # one attribute, quoted as text
    assert bar.get("onload") is None
    assert (bar.findtext("title") or "").endswith(f"1 run(s) {HOSTILE}")


def test_a_histogram_counts_every_run_once_stacking_the_arms() -> None:
    with_ = Series("with plugin", "with", (0.5, 1.5, 1.6, 9.9))
    without = Series("baseline", "without", (1.2, 3.0))
    root = parse(charts.histogram("Latency", [with_, without], charts.seconds))
    bars = find(root, "rect", "bin")
    counted = {(b.get("class"), b.findtext("title")) for b in bars}  # a rect per bin and arm
    assert counted == {
        ("bin with", "0s to 1s: 1 run(s) with plugin"),
        ("bin with", "1s to 2s: 2 run(s) with plugin"),
        ("bin with", "9s to 10s: 1 run(s) with plugin"),
        ("bin without", "1s to 2s: 1 run(s) baseline"),
        ("bin without", "3s to 4s: 1 run(s) baseline"),
    }
    # In the 1-2 s bin the baseline's run sits on top of the two with-plugin runs.
    stacked = sorted(
        (float(b.get("y", "")), float(b.get("height", "")), b.get("class"))
        for b in bars
        if (b.findtext("title") or "").startswith("1s to 2s")
    )
    (top_y, top_h, top_cls), (low_y, low_h, low_cls) = stacked
    assert (top_cls, low_cls) == ("bin without", "bin with")
    assert top_y + top_h == pytest.approx(low_y, abs=0.11)  # coordinates keep one decimal
    assert low_h == pytest.approx(2 * top_h, abs=0.11)
    assert (root.findtext("title") or "") == "Latency: with plugin 4 run(s), baseline 2 run(s)"


def test_a_histogram_without_spread_has_one_bin() -> None:
    root = parse(charts.histogram("Cost", [Series("runs", "with", (0.0, 0.0))], charts.dollars,
                                  unit=0.01))  # fmt: skip
    (bar,) = find(root, "rect", "bin")
    assert bar.findtext("title") == "$0.00 to $0.01: 2 run(s) runs"


def test_markers_are_labelled_lines() -> None:
    root = parse(
        charts.histogram(
            "L", [Series("r", "with", (1.0, 4.0))], charts.seconds, markers=[("p50", 2.5)]
        )
    )
    (marker,) = find(root, "path", "marker")
    labels = [t.text for t in find(root, "text", "marker")]
    assert labels == ["p50 2.50s"]
    assert marker.get("d", "").startswith("M")


@pytest.mark.parametrize(
    ("span", "count", "step"),
    [(9.9, 12, 1.0), (0.09, 12, 0.01), (47.0, 12, 5.0), (100.0, 4, 25.0), (0.0, 12, 1.0)],
)
def test_steps_are_round(span: float, count: int, step: float) -> None:
    assert charts.nice_step(span, count) == pytest.approx(step)


def test_coordinates_are_short_and_never_negative_zero() -> None:
    assert [charts.num(v) for v in (12.0, 29.24, -0.04, 0.0, 166.0)] == [
        "12",
        "29.2",
        "0",
        "0",
        "166",
    ]

"""Plots render real, non-blank images with the Agg backend."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.image
import matplotlib.pyplot as plt
import numpy as np
import pytest

import loopcast
import loopcast.plot as lp


def _png(fig, path):
    fig.savefig(path, dpi=60)
    img = matplotlib.image.imread(path)
    plt.close(fig)
    return img


@pytest.mark.parametrize("plot", [lp.context, lp.buckets, lp.cost, lp.throughput_by_context])
def test_each_plot_draws_something(reference, plot, tmp_path):
    ax = plot(reference)
    assert ax.has_data()
    img = _png(ax.figure, tmp_path / "p.png")
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
    assert float(np.std(img[..., :3])) > 0.05  # not a blank canvas


def test_buckets_mark_the_429s(reference):
    ax = lp.buckets(reference, "cloud")
    labels = ax.get_legend_handles_labels()[1]
    assert "429" in labels and "total_tpm" in labels
    plt.close(ax.figure)


def test_dashboard(reference, tmp_path):
    fig = lp.dashboard(reference)
    assert len(fig.axes) == 4
    img = _png(fig, tmp_path / "d.png")
    assert float(np.std(img[..., :3])) > 0.05


def test_monte_carlo_and_sweep_plots(models, tmp_path):
    mc = loopcast.monte_carlo("reference", 20, models=models)
    ax = lp.monte_carlo(mc, "usd_per_task")
    assert ax.has_data() and [t.get_text() for t in ax.get_legend().get_texts()] == ["cloud", "local"]
    assert float(np.std(_png(ax.figure, tmp_path / "mc.png")[..., :3])) > 0.05
    spec = {"kind": "sweep", "name": "agents", "scenario": "reference", "seeds": 3,
            "parameters": [{"path": "/sessions", "values": [1, 2, 4]}]}
    sw = loopcast.sweep(spec, models=models)
    ax = lp.sweep(sw, metric="stall_share")
    assert len(ax.get_lines()) == 2 and list(ax.get_lines()[0].get_xdata()) == [1, 2, 4]
    assert float(np.std(_png(ax.figure, tmp_path / "sweep.png")[..., :3])) > 0.05


def test_validation_plots(traces, tmp_path):
    w = traces / "claude-code-weka"
    wl = loopcast.validate([w / "trace_0527.json", w / "trace_0729.json"],
                           workload_fit_on=[w / "trace_0043.json", w / "trace_0291.json", w / "trace_0455.json"],
                           sessions=100)
    ax = lp.validation(wl)
    heights = [p.get_height() for p in ax.patches]
    assert heights == pytest.approx([m["ks"] for m in wl["measures"]])
    assert [t.get_text() for t in ax.get_xticklabels()] == [m["measure"] for m in wl["measures"]]
    assert float(np.std(_png(ax.figure, tmp_path / "wl.png")[..., :3])) > 0.05
    sp = loopcast.validate([w / "trace_0043.json"], fit_on=[w / "trace_0455.json", w / "trace_0527.json"], seeds=3)
    ax = lp.validation(sp)
    assert [p.get_height() for p in ax.patches] == pytest.approx([100 * sp["traces"][0]["ape_p50"]])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["trace_0043.json"]


def test_monte_carlo_plot_draws_each_options_distribution(models):
    # One ECDF per option from the seeds' own values (even with a single option: no full-width bar),
    # rising to 1 over the runs that have a value, and the P50 marked at height 0.5.
    mc = loopcast.monte_carlo("reference", 30, models=models)
    ax = lp.monte_carlo(mc, "wall_s")
    lines = [l for l in ax.get_lines() if l.get_label() in ("cloud", "local")]
    assert [l.get_label() for l in lines] == ["cloud", "local"]
    for i, line in enumerate(lines):
        values = np.sort(mc.array["wall_s"][mc.array["option"] == i])
        assert list(line.get_xdata()[1:]) == pytest.approx(list(values))
        assert line.get_ydata()[-1] == pytest.approx(1.0)
    plt.close(ax.figure)


def test_bucket_legend_stays_off_the_429s(reference):
    ax = lp.buckets(reference, "cloud")
    legend = ax.get_legend()
    ax.figure.canvas.draw()
    box, axes = legend.get_window_extent(), ax.get_window_extent()
    assert box.x0 >= axes.x1  # drawn beside the axes, not over the data
    plt.close(ax.figure)

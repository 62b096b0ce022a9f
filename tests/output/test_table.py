from speechannotator.output.table import _width, _wrap, render
from speechannotator.schema import OUTPUT_KEYS, SegmentRecord


def test_wrap_respects_display_width_and_cjk_punctuation():
    text = "中年男性声音，标准英语，低沉且略带沙哑。整体音高中等偏低，略有起伏，句尾上扬，语速适中，表达流畅"
    lines = _wrap(text, 20)
    assert "".join(lines) == text
    assert all(_width(line) <= 22 for line in lines)  # one closing mark may overhang
    assert not any(line[0] in "，。" for line in lines)
    assert _wrap("a quick brown fox jumps", 10) == ["a quick", "brown fox", "jumps"]


def test_render_shows_every_field():
    values = {k: f"v-{k}" for k in OUTPUT_KEYS}
    values.update(speaker_id="spk_01", start_time=1500, end_time=64250)
    out = render([SegmentRecord(**values)], title="t")
    assert "00:01.50-01:04.25" in out and "spk_01" in out
    for k in ("caption", "pitch", "background_sound"):
        assert f"v-{k}" in out

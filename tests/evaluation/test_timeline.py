"""Timeline-Eval pinned to hand-computed cases, and agreement with meeteval's own CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from decimal import Decimal as D
from pathlib import Path

import pytest
from click.testing import CliRunner

from speechannotator.evaluation.cli import eval_group
from speechannotator.evaluation.io import EvalInputError, load_timeline, write_seglst
from speechannotator.evaluation.io import TimelineSegment as T
from speechannotator.evaluation.timeline import score_timeline
from speechannotator.evaluation.tokenize import char_tokens, word_tokens

REF = [T("A", D(0), D(4), "今天天气很好。"), T("B", D(5), D(8), "是的，很好！"), T("A", D(9), D(12), "我们出去吧")]
# 6 + 4 + 5 = 15 characters after stripping punctuation.


def rates(ref, hyp, **kw):
    return score_timeline(ref, hyp, **kw).rates()


def test_tokenizers_strip_spaces_and_punctuation():
    assert char_tokens("你 好，World！") == ["你", "好", "w", "o", "r", "l", "d"]
    assert word_tokens("Hello, well-known   WORLD.") == ["hello", "wellknown", "world"]


def test_perfect_hypothesis_with_other_speaker_names_scores_zero():
    hyp = [T("x", s.start, s.end, s.text.replace("。", "")) for s in REF[:1]]
    hyp += [T("y", REF[1].start, REF[1].end, "是的很好"), T("x", REF[2].start, REF[2].end, "我们 出去 吧")]
    assert rates(REF, hyp) == {"cer": 0.0, "cpcer": 0.0, "tcpcer": 0.0}


def test_speaker_permutation_costs_only_speaker_aware_metrics():
    # Segment 2 is attributed to speaker A's hypothesis label: 4 chars move to the wrong
    # speaker stream -> cp: 4 deletions (B) + 4 insertions (A) = 8 / 15.
    hyp = [T("x", D(0), D(4), "今天天气很好"), T("x", D(5), D(8), "是的很好"), T("y", D(9), D(12), "我们出去吧")]
    r = rates(REF, hyp)
    assert r["cer"] == 0.0
    # Best mapping: A->x (A "今天天气很好我们出去吧" vs x "今天天气很好是的很好": 4 sub + 1 del = 5),
    # B->y (B "是的很好" vs y "我们出去吧": 4 sub + 1 ins = 5) -> 10 / 15.
    assert r["cpcer"] == pytest.approx(100 * 10 / 15)
    assert r["tcpcer"] >= r["cpcer"]


def test_time_shift_inside_and_beyond_the_collar():
    inside = [T(s.speaker, s.start + D(3), s.end + D(3), s.text) for s in REF]
    assert rates(REF, inside, collar=5.0)["tcpcer"] == 0.0
    # Shifted 30 s: no hypothesis character lies near its reference: 15 del + 15 ins.
    far = [T(s.speaker, s.start + D(30), s.end + D(30), s.text) for s in REF]
    r = rates(REF, far, collar=5.0)
    assert r == {"cer": 0.0, "cpcer": 0.0, "tcpcer": pytest.approx(200.0)}
    # A collar of 0 makes even the 3 s shift fail for segment 1 (0-4 vs 3-7 overlap partially).
    assert rates(REF, inside, collar=0.0)["tcpcer"] > 0.0


def test_insertions_and_empty_hypothesis():
    hyp = [T("x", D(0), D(4), "今天天气很好啊啊"), T("y", D(5), D(8), "是的很好"), T("x", D(9), D(12), "我们出去吧")]
    r = rates(REF, hyp)
    assert r["cer"] == r["cpcer"] == r["tcpcer"] == pytest.approx(100 * 2 / 15)
    assert rates(REF, []) == {"cer": 100.0, "cpcer": 100.0, "tcpcer": 100.0}


def test_unknown_extra_speaker_is_a_false_alarm():
    hyp = [
        T("x", D(0), D(4), "今天天气很好"),
        T("y", D(5), D(8), "是的很好"),
        T("x", D(9), D(12), "我们出去吧"),
        T("z", D(13), D(14), "谢谢"),
    ]
    s = score_timeline(REF, hyp)
    r = s.rates()
    assert r["cer"] == r["cpcer"] == r["tcpcer"] == pytest.approx(100 * 2 / 15)
    assert s.pooled().falarm_speakers == 1


def test_word_unit_for_space_delimited_text():
    ref = [T("A", D(0), D(3), "Hello there, my friend.")]
    hyp = [T("x", D(0), D(3), "hello their my friend")]
    assert score_timeline(ref, hyp).rates() == {"wer": 25.0, "cpwer": 25.0, "tcpwer": 25.0}
    assert score_timeline(ref, hyp, unit="char").unit == "char"


def _write_output_json(path: Path, segs: list[T]) -> None:
    items = [
        {"speaker_id": s.speaker, "text": s.text, "start_time": int(s.start * 1000), "end_time": int(s.end * 1000)}
        for s in segs
    ]
    path.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")


def test_loaders_agree_across_formats(tmp_path):
    _write_output_json(tmp_path / "rec.json", REF)
    write_seglst({"rec": REF}, tmp_path / "rec.seglst.json")
    stm = "\n".join(f"rec 1 {s.speaker} {s.start} {s.end} {s.text}" for s in REF)
    (tmp_path / "rec.stm").write_text(stm + "\n", encoding="utf-8")
    loaded = [load_timeline(tmp_path / n)["rec"] for n in ("rec.json", "rec.seglst.json", "rec.stm")]
    assert loaded[0] == loaded[1] == loaded[2] == REF
    with pytest.raises(EvalInputError, match="missing"):
        (tmp_path / "bad.json").write_text('[{"text": "x"}]')
        load_timeline(tmp_path / "bad.json")


def _hyp_sessions():
    # Two recordings: permutation + shift + insertion + an extra speaker + a deletion.
    rec1 = [
        T("h1", D(0), D(4), "今天天气很好"),
        T("h1", D(5.5), D(8), "是的很"),
        T("h2", D(9.5), D(12), "我们出去吧啊"),
        T("h3", D(20), D(21), "好"),
    ]
    rec2 = [T("h1", D(40), D(44), "今天天气"), T("h2", D(5), D(8), "是的很好"), T("h2", D(9), D(12), "我们出去")]
    return {"rec1": rec1, "rec2": rec2}


@pytest.mark.skipif(
    shutil.which("meeteval-wer") is None and not Path(sys.executable).with_name("meeteval-wer").exists(),
    reason="meeteval CLI not installed",
)
def test_cli_agrees_with_meeteval_cli(tmp_path):
    ref_dir, hyp_dir = tmp_path / "ref", tmp_path / "hyp"
    ref_dir.mkdir()
    hyp_dir.mkdir()
    for name, segs in _hyp_sessions().items():
        _write_output_json(ref_dir / f"{name}.json", REF)
        _write_output_json(hyp_dir / f"{name}.json", segs)
    result = CliRunner().invoke(eval_group, ["timeline", "--ref", str(ref_dir), "--hyp", str(hyp_dir), "--json"])
    assert result.exit_code == 0, result.output
    ours = json.loads(result.stdout)

    # meeteval's CLI on SegLST files whose words are space-separated characters.
    write_seglst(load_timeline(ref_dir), tmp_path / "r.json", split_chars=True)
    write_seglst(load_timeline(hyp_dir), tmp_path / "h.json", split_chars=True)
    exe = shutil.which("meeteval-wer") or str(Path(sys.executable).with_name("meeteval-wer"))
    theirs = {}
    for metric, extra in (("cpwer", []), ("tcpwer", ["--collar", "5"])):
        subprocess.run(
            [exe, metric, "-r", "r.json", "-h", "h.json", *extra], cwd=tmp_path, check=True, capture_output=True
        )
        theirs[metric] = json.loads((tmp_path / f"h_{metric}.json").read_text())
        theirs[metric + "_reco"] = json.loads((tmp_path / f"h_{metric}_per_reco.json").read_text())
    assert ours["cpcer"] == pytest.approx(100 * theirs["cpwer"]["error_rate"], abs=1e-9)
    assert ours["tcpcer"] == pytest.approx(100 * theirs["tcpwer"]["error_rate"], abs=1e-9)
    for name in ("rec1", "rec2"):
        assert ours["per_recording"][name]["cpcer"] == pytest.approx(100 * theirs["cpwer_reco"][name]["error_rate"])
        assert ours["per_recording"][name]["tcpcer"] == pytest.approx(100 * theirs["tcpwer_reco"][name]["error_rate"])
    assert ours["tcpcer"] > ours["cpcer"] > 0  # the case really exercises both metrics


def test_fast_engine_matches_meeteval_on_random_cases():
    import random

    rng = random.Random(7)
    alphabet = "天地人你我他好的是不"
    for _ in range(25):

        def segs(speakers, n):
            out, t = [], 0
            for _ in range(n):
                dur = rng.randint(1, 4)
                text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
                out.append(T(rng.choice(speakers), D(t), D(t + dur), text))
                t += rng.randint(0, 3)  # overlaps and equal start times happen
            return out

        ref = segs(["A", "B", "C"][: rng.randint(1, 3)], rng.randint(1, 8))
        hyp = segs(["x", "y", "z", "w"][: rng.randint(1, 4)], rng.randint(1, 8))
        fast, slow = score_timeline(ref, hyp, engine="fast"), score_timeline(ref, hyp, engine="meeteval")
        f, s = fast.pooled(), slow.pooled()
        assert (f.plain.errors, f.cp.errors, f.tcp.errors) == (s.plain.errors, s.cp.errors, s.tcp.errors)
        assert (f.missed_speakers, f.falarm_speakers) == (s.missed_speakers, s.falarm_speakers)
        assert f.plain.length == s.plain.length and f.cp.length == s.cp.length

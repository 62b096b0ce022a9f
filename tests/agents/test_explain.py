import json

from agents_helpers import REC, annotate, config, dialogue, make_store
from click.testing import CliRunner
from test_review_loop import CorruptingBackend

from speechannotator.cli import explain as main_cli_name
from speechannotator.output.explain import explain, explain_command


def _done(tmp_path):
    segs, evs = dialogue()
    store = make_store(tmp_path, segs, evs)
    recs = annotate(store, config(), CorruptingBackend())
    (tmp_path / f"{REC}.json").write_text(json.dumps([r.ordered() for r in recs], ensure_ascii=False), encoding="utf-8")
    return store


def test_explain_prints_the_trail(tmp_path):
    store = _done(tmp_path)
    text = explain(store, REC, 4, "background_sound")
    assert "seg_00004" in text and "admissible evidence: scene., events., snr.db" in text
    assert "scene.music_prob = 0.02" in text
    assert "round 0: '持续的引擎轰鸣'" in text and "REJECTED" in text and "revision request:" in text
    assert "round 1: '无'" in text and "review round 1: accepted" in text and text.rstrip().endswith("final: 无")
    quiet = explain(store, REC, 0, "speed")
    assert "round 1" not in quiet and "review round 0: accepted" in quiet


def test_explain_cli(tmp_path):
    store = _done(tmp_path)
    store.close()
    assert main_cli_name is explain_command and explain_command.name == "explain"
    runner = CliRunner()
    res = runner.invoke(explain_command, [str(tmp_path / f"{REC}.json"), "--segment", "2", "--field", "gender"])
    assert res.exit_code == 0, res.output
    assert "round 0: '女声'" in res.output and "round 1: '男声'" in res.output and "final: 男声" in res.output
    bad = runner.invoke(explain_command, [str(tmp_path / f"{REC}.json"), "--segment", "9", "--field", "gender"])
    assert bad.exit_code != 0 and "out of range" in bad.output
    bad = runner.invoke(explain_command, [str(tmp_path / f"{REC}.json"), "--segment", "0", "--field", "colour"])
    assert bad.exit_code != 0 and "unknown field" in bad.output
    missing = runner.invoke(explain_command, [str(tmp_path / "nothere" / "x.json"), "--segment", "0", "--field", "age"])
    assert missing.exit_code != 0 and "no state database" in missing.output

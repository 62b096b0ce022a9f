"""The stage table: one ordered home for the stage names, covering the paper's twelve stages."""

from speechannotator.pipeline import STAGES
from speechannotator.stages import StageName


def test_the_table_runs_every_named_stage_once_in_order():
    assert [s.name for s in STAGES] == list(StageName)
    # Stage 1 (load) runs before the table; every later paper stage is covered once, in order.
    covered = [n for s in STAGES for n in s.paper]
    assert sorted(covered) == list(range(2, 13)) and len(set(covered)) == len(covered)
    # Only the writer runs on every pass: the JSON is rebuilt from the state when missing.
    assert [s.name for s in STAGES if not s.marked] == [StageName.WRITE]

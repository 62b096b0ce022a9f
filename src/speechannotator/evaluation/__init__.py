"""SA-Eval: Timeline-Eval (CER/cpCER/tcpCER), Closed-Eval and Open-Eval, and the bench runner.

Entry points: ``timeline.score_timeline``, ``attributes.score_attributes``,
``encoders.make_encoder``, ``io.load_timeline`` / ``io.load_records``, ``bench.BenchRunner``,
``baseline.BaselineAnnotator``, ``diarization.diarization_scores`` (DER, JER); click groups
``cli.eval_group`` and ``cli.bench_group``. ``recordings``: audio with exact references, built for
the tests and the benchmarks.
"""

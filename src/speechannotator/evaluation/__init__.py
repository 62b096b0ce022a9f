"""SA-Eval: Timeline-Eval (CER/cpCER/tcpCER), Closed-Eval and Open-Eval, and the bench runner.

Entry points: ``timeline.score_timeline``, ``attributes.score_attributes``,
``encoders.make_encoder``, ``io.load_timeline`` / ``io.load_records``, ``bench.BenchRunner``,
``baseline.BaselineAnnotator``; click groups ``cli.eval_group`` and ``cli.bench_group``.
"""

"""The public API and the command line's mapping of flags onto Config."""

import speechannotator
from speechannotator.cli import CONFIG_FLAGS, annotate, config_overrides
from speechannotator.config import Config, load_config


def test_the_package_exports_a_short_api():
    assert sorted(speechannotator.__all__) == ["AnnotationError", "Annotator", "Config", "SegmentRecord", "annotate"]
    from speechannotator.pipeline import Annotator
    from speechannotator.schema import SegmentRecord

    assert speechannotator.Annotator is Annotator and speechannotator.SegmentRecord is SegmentRecord
    assert speechannotator.Config is Config


def test_every_settings_flag_maps_onto_a_config_field():
    # Run options, not settings: what to read and write, and where the corpus runs.
    not_settings = {
        "paths",
        "out_dir",
        "config_path",
        "timeline",
        "show",
        "quiet",
        "verbose",
        "engine",
        "ray_address",
        "workers",
        "export",
        "enroll",  # named example voices for the corpus speaker ids
    }
    assert {p.name for p in annotate.params} - not_settings == set(CONFIG_FLAGS)
    for field, implied in CONFIG_FLAGS.values():
        for path in (field, *implied):
            node = Config()
            for part in path.split("."):
                node = getattr(node, part)  # raises for a field Config does not have


def test_flags_override_the_config_and_imply_their_backend():
    cfg = load_config(
        None,
        config_overrides(
            {
                "llm_url": "http://127.0.0.1:9/v1",
                "llm_model": "m",
                "review": False,
                "priors": None,
                "pyannote_path": "models/p",
                "num_speakers": 2,
                "labels": "zh",
            }
        ),
    )
    assert (cfg.agents.backend, cfg.labeler.url, cfg.labeler.model) == ("openai", "http://127.0.0.1:9/v1", "m")
    assert cfg.agents.review is False and cfg.agents.priors is True  # an absent flag keeps the default
    assert (cfg.diarization.backend, cfg.diarization.pyannote_path, cfg.diarization.num_speakers) == (
        "pyannote",
        "models/p",
        2,
    )
    assert cfg.labels == "zh" and load_config(None, config_overrides({"preset": "gpu"})).asr.device == "cuda"

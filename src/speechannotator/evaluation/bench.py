"""The bench runner: annotate every case of a bench ``--runs`` times and score it.

A bench is a folder of ``<case>.<audio>`` + ``<case>.json`` (reference in the output format).
The timeline setting annotates from audio alone (Table 1); the fixed-timeline setting hands
the reference JSON as the timeline (Tables 2 and 3, ablations included). The annotator is
injectable: ``annotate(path, *, out_dir, config, timeline) -> records``; by default the
pipeline's ``speechannotator.annotate``. Finished outputs are reused, so a killed run resumes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from ..audio import AUDIO_EXTENSIONS
from .attributes import score_attributes
from .encoders import CachedEncoder, Encoder
from .io import EvalInputError, Sessions, sessions_from_json
from .report import VariantRuns, write_report
from .timeline import DEFAULT_COLLAR, score_sessions

log = logging.getLogger(__name__)

AnnotateFn = Callable[..., Sequence]

ABLATIONS: dict[str, tuple[str, str]] = {
    # flag -> (variant name as in the paper's Table 3, config.agents switch turned off)
    "no_review": ("w/o Loop", "review"),
    "no_context": ("w/o Context", "context"),
    "no_priors": ("w/o Priors", "priors"),
}


@dataclass(frozen=True)
class BenchCase:
    name: str
    audio: Path
    reference: Path
    records: list[dict]


def discover_cases(bench_dir: str | Path) -> list[BenchCase]:
    root = Path(bench_dir)
    if not root.is_dir():
        raise EvalInputError(f"{root}: bench folder does not exist")
    cases = []
    for ref in sorted(root.glob("*.json")):
        audio = [p for p in sorted(root.glob(f"{ref.stem}.*")) if p.suffix.lower() in AUDIO_EXTENSIONS]
        if not audio:
            continue  # results or notes beside the cases
        try:
            records = json.loads(ref.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise EvalInputError(f"{ref}: not readable JSON ({exc})") from exc
        if not isinstance(records, list):
            raise EvalInputError(f"{ref}: reference must be a JSON array of segments")
        cases.append(BenchCase(ref.stem, audio[0], ref, records))
    if not cases:
        raise EvalInputError(f"{root}: no <case>.<audio> + <case>.json pairs")
    return cases


def _default_annotate() -> AnnotateFn:
    from speechannotator import annotate  # the pipeline; imported only when a bench really runs it

    return annotate


def _as_dicts(records: Sequence) -> list[dict]:
    return [r.ordered() if hasattr(r, "ordered") else dict(r) for r in records]


@dataclass
class BenchSettings:
    runs: int = 5
    ablations: tuple[str, ...] = ()  # keys of ABLATIONS
    fixed_timeline_only: bool = False
    collar: float = DEFAULT_COLLAR
    system_name: str = "SpeechAnnotator"
    extra: dict = field(default_factory=dict)


class BenchRunner:
    def __init__(
        self,
        bench_dir: str | Path,
        out_dir: str | Path,
        *,
        encoder: Encoder,
        config=None,
        annotate: AnnotateFn | None = None,
        settings: BenchSettings | None = None,
    ):
        self.cases = discover_cases(bench_dir)
        self.bench_dir, self.out_dir = Path(bench_dir), Path(out_dir)
        self.encoder = CachedEncoder(encoder)
        self.settings = settings or BenchSettings()
        if self.settings.runs < 1:
            raise ValueError("runs must be >= 1")
        unknown = set(self.settings.ablations) - set(ABLATIONS)
        if unknown:
            raise ValueError(f"unknown ablations: {', '.join(sorted(unknown))}")
        if config is None:
            from ..config import Config

            config = Config()
        self.config = config
        self._annotate = annotate

    @property
    def annotate(self) -> AnnotateFn:
        if self._annotate is None:
            self._annotate = _default_annotate()
        return self._annotate

    def _variant_config(self, switch: str | None):
        cfg = self.config.model_copy(deep=True)
        if switch:
            setattr(cfg.agents, switch, False)
        return cfg

    def _outputs(self, folder: Path, cfg, fixed: bool, failures: list[str], bar: tqdm) -> dict[str, list[dict]]:
        folder.mkdir(parents=True, exist_ok=True)
        out: dict[str, list[dict]] = {}
        for case in self.cases:
            done = folder / f"{case.name}.json"
            if done.exists():  # resume: a finished output is kept
                out[case.name] = json.loads(done.read_text(encoding="utf-8"))
            else:
                try:
                    recs = _as_dicts(
                        self.annotate(
                            case.audio, out_dir=folder, config=cfg, timeline=case.reference if fixed else None
                        )
                    )
                    done.write_text(json.dumps(recs, ensure_ascii=False, indent=1), encoding="utf-8")
                    out[case.name] = recs
                except Exception as exc:  # one failed case scores 0 / all-deleted; the bench goes on
                    msg = f"{folder.name}/{case.name}: {exc.__class__.__name__}: {exc}"
                    log.error("annotation failed: %s", msg)
                    failures.append(msg)
                    out[case.name] = []
            bar.update(1)
        return out

    def _timeline(self, outputs: dict[str, list[dict]]) -> dict[str, float | None]:
        ref: Sessions = {c.name: sessions_from_json(c.reference, c.records)[c.reference.stem] for c in self.cases}
        hyp: Sessions = {}
        for name, recs in outputs.items():
            try:
                hyp[name] = sessions_from_json(Path(f"{name}.json"), recs)[name] if recs else []
            except EvalInputError as exc:
                log.error("unreadable timeline output %s: %s", name, exc)
                hyp[name] = []
        return score_sessions(ref, hyp, collar=self.settings.collar).rates()

    def run(self) -> tuple[list[VariantRuns], dict[str, Path]]:
        s = self.settings
        variants: list[tuple[str, str | None]] = [(s.system_name, None)]
        variants += [ABLATIONS[a] for a in s.ablations]
        n_jobs = s.runs * len(self.cases) * (len(variants) + (0 if s.fixed_timeline_only else 1))
        results = []
        with tqdm(total=n_jobs, desc="bench", unit="case") as bar:
            for name, switch in variants:
                vr = VariantRuns(name)
                cfg = self._variant_config(switch)
                slug = name.lower().replace("/", "").replace(" ", "-")
                for k in range(1, s.runs + 1):
                    if switch is None and not s.fixed_timeline_only:
                        outs = self._outputs(self.out_dir / "timeline" / slug / f"run{k}", cfg, False, vr.failures, bar)
                        vr.timeline.append(self._timeline(outs))
                    outs = self._outputs(self.out_dir / "fixed" / slug / f"run{k}", cfg, True, vr.failures, bar)
                    refs = {c.name: c.records for c in self.cases}
                    vr.attributes.append(score_attributes(refs, outs, self.encoder).to_dict())
                results.append(vr)
        settings = {
            "bench": str(self.bench_dir),
            "runs": s.runs,
            "cases": [c.name for c in self.cases],
            "encoder": self.encoder.name,
            "collar": s.collar,
            "ablations": list(s.ablations),
            "fixed_timeline_only": s.fixed_timeline_only,
            **s.extra,
        }
        files = write_report(self.out_dir, results, settings, full_name=s.system_name)
        return results, files

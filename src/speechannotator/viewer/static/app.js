// speechannotator review page. Every piece of data (transcripts, labels, model output) reaches
// the page as text nodes or attribute values set through the DOM; nothing is parsed as HTML.
'use strict';

const TOKEN = new URLSearchParams(location.search).get('token') || '';
const app = document.getElementById('app');
const player = document.getElementById('player');
const COLORS = ['#2f6fdf', '#e07a1f', '#16a34a', '#b83280', '#0891b2', '#7c3aed', '#ca8a04', '#dc2626'];
const FLAG_NAMES = { flagged: 'flagged', relabeled: 'relabeled', failed: 'failed', edited: 'edited' };

// -- small helpers -----------------------------------------------------------------------

function el(tag, props, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = String(v);
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'value') e.value = v;
    else if (k === 'style')
      Object.assign(e.style, v); // CSSOM: the CSP forbids style attributes
    else e.setAttribute(k, String(v));
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === undefined || kid === null || kid === false) continue;
    e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return e;
}

function toast(message, isError) {
  const t = document.getElementById('toast');
  t.textContent = message;
  t.className = 'show' + (isError ? ' error' : '');
  clearTimeout(toast.timer);
  toast.timer = setTimeout(
    () => {
      t.className = '';
    },
    isError ? 5000 : 1800,
  );
}

async function api(path, params, body) {
  const url = '/api/' + path + (params ? '?' + new URLSearchParams(params) : '');
  const init = { headers: { 'X-Session-Token': TOKEN } };
  if (body !== undefined) {
    init.method = 'POST';
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(url, init);
  let data = null;
  try {
    data = await res.json();
  } catch (e) {
    data = { error: res.statusText };
  }
  if (!res.ok) throw new Error(data && data.error ? data.error : res.statusText);
  return data;
}

const fmtTime = (s) => {
  if (s === null || s === undefined || isNaN(s)) return '–';
  const m = Math.floor(s / 60),
    sec = s - 60 * m;
  return m + ':' + sec.toFixed(2).padStart(5, '0');
};
const fmtDur = (s) => (s === null || s === undefined ? '–' : s >= 60 ? fmtTime(s) : s.toFixed(1) + ' s');
const utc = (seconds) => new Date(seconds * 1000).toISOString().replace('T', ' ').slice(0, 19);
const badge = (kind) => el('span', { class: 'badge ' + kind, text: FLAG_NAMES[kind] || kind });
const cell = (n) => el('td', { class: 'num' + (n ? '' : ' zero'), text: n });
const speakerColor = (rec, sid) =>
  COLORS[
    Math.max(
      0,
      rec.speakers.findIndex((s) => s.speaker_id === sid),
    ) % COLORS.length
  ];

function parseHash() {
  const h = location.hash.replace(/^#\/?/, '');
  const [path, query] = h.split('?');
  const q = new URLSearchParams(query || '');
  if (path.startsWith('rec/')) return { view: 'rec', rec: decodeURIComponent(path.slice(4)), q };
  if (path === 'voices') return { view: 'voices', q };
  return { view: 'corpus', q };
}

function hashFor(view, rec, q) {
  const qs = q && [...q.keys()].length ? '?' + q : '';
  return view === 'rec' ? '#/rec/' + encodeURIComponent(rec) + qs : '#/' + qs;
}

// -- corpus list -------------------------------------------------------------------------

const corpusState = { sort: 'rec', asc: true, offset: 0 };

// Each route() draws one view; a view whose data arrives after a newer route() draws nothing,
// so a slow corpus list cannot cover the voices the reviewer clicked to meanwhile.
let routeSeq = 0;

// The corpus list is paged, filtered and sorted by the server: a page of rows at a time, so
// ten thousand recordings cost one page of DOM.
async function showCorpus(q, seq = routeSeq) {
  stopPlayback();
  player.removeAttribute('src');
  document.getElementById('crumb').textContent = '';
  corpusState.offset = Number(q.get('offset') || 0);
  let data = await api('corpus', { limit: 1 }); // the vocabularies and who is reviewing
  if (seq !== routeSeq) return; // the reviewer went elsewhere while this was asked
  document.getElementById('who').textContent = 'reviewer: ' + data.reviewer;
  const field = el(
    'select',
    { id: 'f-field' },
    el('option', { value: '', text: 'any field' }),
    data.fields.map((f) => el('option', { value: f, text: f })),
  );
  const flag = el(
    'select',
    { id: 'f-flag' },
    data.flags.map((f) => el('option', { value: f, text: f })),
  );
  const search = el('input', { id: 'f-name', type: 'search', placeholder: 'recording name…' });
  field.value = q.get('field') || '';
  flag.value = q.get('flag') || 'relabeled';
  search.value = q.get('name') || '';
  const body = el('tbody');
  const base = [
    ['rec', 'Recording'],
    ['duration', 'Duration', 1],
    ['speakers', 'Speakers', 1],
    ['segments', 'Segments', 1],
    ['status', 'Status'],
    ['reviewed', 'Reviewed', 1],
    ['flagged', 'Flagged', 1],
    ['relabeled', 'Relabeled', 1],
    ['failed', 'Failed', 1],
    ['edited', 'Edited', 1],
  ];
  const head = el('tr');
  const table = el('table', { class: 'grid', id: 'corpus' }, el('thead', {}, head), body);
  const summary = el('span', { class: 'dim', id: 'corpus-summary' });
  const progress = el('span', { class: 'progress', id: 'corpus-progress' });
  const pageInfo = el('span', { class: 'dim', id: 'page-info' });
  const prev = el('button', { id: 'prev-page', text: '◂ previous' });
  const next = el('button', { id: 'next-page', text: 'next ▸' });

  let asked = 0;
  async function render() {
    const f = field.value,
      fl = flag.value,
      name = search.value.trim();
    const mine = ++asked;
    const params = { offset: corpusState.offset, sort: corpusState.sort, asc: corpusState.asc ? 1 : 0, flag: fl };
    if (f) params.field = f;
    if (name) params.name = name;
    try {
      data = await api('corpus', params);
    } catch (e) {
      toast(e.message, true);
      return;
    }
    if (mine !== asked) return; // a newer filter won
    const columns = f ? [...base, ['match', `segments with ${fl} ${f}`, 1]] : base; // the filter's own count
    const key = corpusState.sort;
    head.replaceChildren(
      ...columns.map(([k, label, num]) =>
        el('th', {
          class: (num ? 'num ' : '') + (k === key ? 'sorted' + (corpusState.asc ? ' asc' : '') : ''),
          'data-key': k,
          text: label,
          onclick: () => {
            corpusState.asc = corpusState.sort === k ? !corpusState.asc : k === 'rec';
            corpusState.sort = k;
            corpusState.offset = 0;
            render();
          },
        }),
      ),
    );
    body.replaceChildren(
      ...data.recordings.map((r) =>
        el(
          'tr',
          {
            'data-rec': r.rec,
            onclick: () => {
              const nq = new URLSearchParams();
              if (f) {
                nq.set('field', f);
                nq.set('flag', fl);
              }
              location.hash = hashFor('rec', r.rec, nq);
            },
          },
          el('td', {}, el('a', { href: hashFor('rec', r.rec), text: r.rec })),
          el('td', { class: 'num', text: fmtDur(r.duration) }),
          cell(r.speakers),
          cell(r.segments),
          el('td', {}, el('span', { class: 'status ' + r.status, text: r.status, title: r.error || null })),
          el('td', { class: 'num' + (r.reviewed ? '' : ' zero'), text: `${r.reviewed} / ${r.segments}` }),
          cell(r.flagged),
          cell(r.relabeled),
          cell(r.failed),
          cell(r.edited),
          f ? cell(r.match) : null,
        ),
      ),
    );
    if (!data.recordings.length)
      body.append(el('tr', {}, el('td', { colspan: columns.length, class: 'dim', text: 'no recording matches' })));
    summary.textContent = `${data.total} recording(s), ${fmtDur(data.duration)} in ${data.out_dir}`;
    progress.replaceChildren(
      el('meter', { min: 0, max: data.segments || 1, value: data.reviewed }),
      ` ${data.reviewed} / ${data.segments} segments reviewed`,
    );
    const last = Math.min(data.offset + data.limit, data.matched);
    pageInfo.textContent = data.matched
      ? `${data.offset + 1}–${last} of ${data.matched}` + (data.matched < data.total ? ` matching` : '')
      : '';
    prev.disabled = data.offset <= 0;
    next.disabled = last >= data.matched;
    const nq = new URLSearchParams();
    if (f) nq.set('field', f);
    if (f || fl !== 'relabeled') nq.set('flag', fl);
    if (name) nq.set('name', name);
    if (data.offset) nq.set('offset', data.offset);
    history.replaceState(null, '', location.pathname + location.search + hashFor('corpus', null, nq));
  }
  const refilter = () => {
    corpusState.offset = 0;
    render();
  };
  for (const c of [field, flag]) c.addEventListener('change', refilter);
  search.addEventListener('input', () => {
    clearTimeout(search.timer);
    search.timer = setTimeout(refilter, 150);
  });
  prev.addEventListener('click', () => {
    corpusState.offset = Math.max(0, corpusState.offset - data.limit);
    render();
  });
  next.addEventListener('click', () => {
    corpusState.offset += data.limit;
    render();
  });
  app.replaceChildren(
    el('div', { class: 'rechead' }, el('h1', { text: 'Corpus' }), summary, progress),
    el(
      'div',
      { class: 'toolbar' },
      search,
      el('label', { text: 'segments where' }),
      field,
      el('label', { text: 'is' }),
      flag,
      el('span', { class: 'spacer' }),
      pageInfo,
      prev,
      next,
    ),
    table,
    el('p', {
      class: 'hint',
      text:
        'flagged: the Review Agent rejected a prediction; relabeled: the field was predicted ' +
        'again in a later round; failed: the backend gave no valid value; edited: a human decision is in force. ' +
        'Click a column to sort.',
    }),
  );
  await render();
}

// -- voices ------------------------------------------------------------------------------

// The corpus voices (OUT/speakers.jsonl): listen to each, merge two, split a recording's speaker
// off one. Corrections go to the server's voice decisions, which rewrite the registry.
let clipStop = null;

function playClip(rec, start, end) {
  const src = '/api/audio?' + new URLSearchParams({ rec, token: TOKEN });
  const go = () => {
    player.currentTime = start;
    clipStop = end;
    const p = player.play();
    if (p && p.catch) p.catch((e) => toast('cannot play: ' + e.message, true));
  };
  if (player.getAttribute('src') !== src) {
    player.setAttribute('src', src);
    player.dataset.rec = rec;
    player.addEventListener('loadedmetadata', go, { once: true });
    player.load();
  } else go();
}

async function voiceDecision(kind, body, message) {
  try {
    const res = await api('voices/' + kind, null, body);
    toast(message(res));
    await showVoices();
  } catch (e) {
    toast(kind + ' refused: ' + e.message, true);
  }
}

async function showVoices(seq = routeSeq) {
  stopPlayback();
  document.getElementById('crumb').textContent = '/ voices';
  const data = await api('voices');
  if (seq !== routeSeq) return;
  document.getElementById('who').textContent = 'reviewer: ' + data.reviewer;
  const ids = data.voices.map((v) => v.id);
  const body = el('tbody');
  for (const v of data.voices) {
    const summary =
      [v.gender, v.age, v.pitch_hz_median ? v.pitch_hz_median + ' Hz' : null].filter(Boolean).join(', ') || '–';
    const rep = v.representative;
    const target = el(
      'select',
      { class: 'merge-into', 'aria-label': 'merge ' + v.id + ' into' },
      el('option', { value: '', text: 'merge into…' }),
      ids.filter((i) => i !== v.id).map((i) => el('option', { value: i, text: i })),
    );
    const merge = el('button', {
      class: 'merge',
      text: 'merge',
      onclick: () =>
        target.value &&
        voiceDecision('merge', { keep: target.value, absorb: v.id }, (r) => v.id + ' merged into ' + r.voice),
    });
    const clips = el(
      'ul',
      { class: 'clips' },
      v.members.map((m) =>
        el(
          'li',
          { 'data-member': m.member },
          m.clip
            ? el('button', {
                class: 'listen',
                text: '▶',
                title: m.clip.text,
                onclick: () => playClip(m.rec, m.clip.start, m.clip.end),
              })
            : null,
          el('a', { href: hashFor('rec', m.rec), text: m.rec }),
          el('span', { class: 'dim', text: ' ' + m.speaker + ' ' }),
          v.members.length > 1
            ? el('button', {
                class: 'split',
                text: 'split off',
                onclick: () =>
                  voiceDecision(
                    'split',
                    { rec: m.rec, speaker: m.speaker },
                    (r) => m.member + ' is now ' + r.voice,
                  ),
              })
            : null,
        ),
      ),
    );
    body.append(
      el(
        'tr',
        { 'data-voice': v.id },
        el('td', {}, el('span', { class: 'voice-id', text: v.id }), v.enrolled ? badge('enrolled') : null),
        el('td', { class: 'num', text: v.recordings.length }),
        el('td', { class: 'num', text: fmtDur(v.hours * 3600) }),
        el('td', { text: summary }),
        el(
          'td',
          {},
          rep
            ? el('button', {
                class: 'listen rep',
                text: '▶ voice',
                onclick: () => playClip(rep.recording, rep.start, rep.end),
              })
            : null,
        ),
        el('td', {}, clips),
        el('td', {}, target, merge),
      ),
    );
  }
  const head = el(
    'tr',
    {},
    ['Voice', 'Recordings', 'Speech', 'Gender, age, pitch', 'Listen', 'Per recording', 'Correct'].map((h) =>
      el('th', { text: h }),
    ),
  );
  const trail = el(
    'ul',
    { id: 'voice-trail' },
    data.decisions.map((d) => el('li', { 'data-decision': d.id, text: d.text + ' at ' + utc(d.at) })),
  );
  app.replaceChildren(
    el('h2', { text: data.voices.length + ' corpus voice(s)' }),
    data.voices.length
      ? el('table', { id: 'voices', class: 'grid' }, el('thead', {}, head), body)
      : el('p', { class: 'dim', text: 'no corpus voices: annotate with speaker ids to join them' }),
    el('h3', { text: 'voice decisions' }),
    data.decisions.length ? trail : el('p', { class: 'dim', text: 'none yet' }),
  );
}

// -- recording view ----------------------------------------------------------------------

const view = { rec: null, sel: -1, stopAt: null, loopFrom: null, loop: false, panel: null, q: null, sort: '' };

function stopPlayback() {
  view.stopAt = null;
  if (!player.paused) player.pause();
}

function playSegment(i) {
  const seg = view.rec.segments[i];
  if (!seg) return;
  select(i);
  view.stopAt = seg.end_time / 1000;
  view.loopFrom = seg.start_time / 1000;
  player.currentTime = seg.start_time / 1000;
  follow(seg.start_time / 1000, true);
  const p = player.play();
  if (p && p.catch) p.catch((e) => toast('cannot play: ' + e.message, true));
}

function togglePlay() {
  if (!player.paused) {
    player.pause();
    return;
  }
  const seg = view.rec.segments[view.sel];
  if (!seg) {
    player.play();
    return;
  }
  const t = player.currentTime * 1000;
  if (t >= seg.start_time && t < seg.end_time - 30) {
    view.stopAt = seg.end_time / 1000;
    view.loopFrom = seg.start_time / 1000;
    player.play();
  } else playSegment(view.sel);
}

function tick() {
  if (!view.rec && clipStop !== null && !player.paused && player.currentTime >= clipStop) {
    player.pause(); // the voices view: a clip ends at its segment's end
    clipStop = null;
  }
  if (view.rec && view.stopAt !== null && !player.paused && player.currentTime >= view.stopAt) {
    if (view.loop && view.loopFrom !== null) {
      player.currentTime = view.loopFrom; // loop: the same span again until stopped
      view.loops = (view.loops || 0) + 1;
    } else {
      player.pause();
      view.stopAt = null;
    }
  }
  if (view.rec && !player.paused) follow(player.currentTime, false);
  if (view.rec) drawTimeline();
  requestAnimationFrame(tick);
}

function matches(seg) {
  const f = view.q.get('field'),
    fl = view.q.get('flag');
  if (!f) return true;
  return (seg.flags[f] || []).includes(fl);
}

function layout(canvas) {
  const lanes = view.rec.speakers.length;
  const W = canvas.clientWidth,
    waveH = 84,
    specH = view.spec ? 96 : 0,
    laneH = 24,
    axisH = 18,
    G = 56; // G: gutter for lane names
  const lanesY = waveH + specH + 4;
  return { W, G, waveH, specH, laneH, axisH, lanesY, H: lanesY + lanes * laneH + axisH + 2, lanes };
}

// -- zoom and scroll: the visible window [t0, t1] in seconds --------------------------------

const MIN_SPAN = 0.5;
function win() {
  const dur = view.rec.duration || 1;
  return view.win || [0, dur];
}

function setWindow(t0, t1) {
  const dur = view.rec.duration || 1;
  let span = Math.max(MIN_SPAN, Math.min(dur, t1 - t0));
  t0 = Math.max(0, Math.min(dur - span, t0));
  view.win = span >= dur - 1e-6 ? null : [t0, t0 + span];
  const bar = document.getElementById('scroll');
  if (bar) {
    bar.max = String(Math.max(0, dur - span));
    bar.step = String(span / 50);
    bar.value = String(t0);
    bar.disabled = !view.win;
  }
  const label = document.getElementById('zoom-level');
  if (label) label.textContent = view.win ? `${fmtDur(span)} shown` : 'whole recording';
  clearTimeout(setWindow.timer);
  setWindow.timer = setTimeout(refreshDetail, 120); // after the wheel settles
}

function zoom(factor, center) {
  const [t0, t1] = win();
  const c = center === undefined ? (t0 + t1) / 2 : center;
  const span = (t1 - t0) * factor;
  setWindow(c - ((c - t0) / (t1 - t0)) * span, c - ((c - t0) / (t1 - t0)) * span + span);
}

function timeAt(canvas, clientX) {
  const rect = canvas.getBoundingClientRect(),
    L = layout(canvas),
    [t0, t1] = win();
  return t0 + Math.max(0, Math.min(1, (clientX - rect.left - L.G) / (rect.width - L.G))) * (t1 - t0);
}

function onWheel(ev) {
  const [t0, t1] = win();
  if (ev.ctrlKey || ev.metaKey) {
    ev.preventDefault();
    zoom(ev.deltaY > 0 ? 1.25 : 0.8, timeAt(ev.currentTarget, ev.clientX));
  } else if (view.win) {
    ev.preventDefault();
    const d = Math.abs(ev.deltaX) > Math.abs(ev.deltaY) ? ev.deltaX : ev.deltaY;
    const shift = (d / ev.currentTarget.clientWidth) * (t1 - t0);
    setWindow(t0 + shift, t1 + shift);
  }
}

// Detailed peaks and the spectrogram of the visible window, fetched for its own columns.
async function refreshDetail() {
  if (!view.rec) return;
  const canvas = document.getElementById('timeline');
  if (!canvas) return;
  const [t0, t1] = win(),
    L = layout(canvas),
    dpr = window.devicePixelRatio || 1,
    rec = view.rec.rec,
    span = L.W - L.G;
  const ask = { rec, t0: t0.toFixed(3), t1: t1.toFixed(3) };
  try {
    if (view.win && t1 - t0 <= 900) {
      const got = await api('peaks', { ...ask, columns: Math.min(4000, Math.round(span * dpr)) });
      if (view.rec && view.rec.rec === rec) view.detail = { t0, t1, peaks: got.peaks };
    }
    if (view.spec) {
      const got = await api('spectrogram', { ...ask, columns: Math.min(1200, Math.round(span)) });
      if (view.rec && view.rec.rec === rec) view.specImg = { t0, t1, canvas: spectrogramCanvas(got) };
    }
  } catch (e) {
    toast(e.message, true);
  }
}

// Bytes 0..255 per (column, bin) into an image: dark blue (quiet) to yellow (loud), low bins at the bottom.
function spectrogramCanvas(spec) {
  const bytes = Uint8Array.from(atob(spec.data), (c) => c.charCodeAt(0));
  const c = document.createElement('canvas');
  c.width = spec.columns;
  c.height = spec.bins;
  const img = c.getContext('2d').createImageData(spec.columns, spec.bins);
  for (let col = 0; col < spec.columns; col++)
    for (let b = 0; b < spec.bins; b++) {
      const v = bytes[col * spec.bins + b] / 255,
        o = ((spec.bins - 1 - b) * spec.columns + col) * 4;
      img.data[o] = Math.round(255 * Math.min(1, 1.6 * v));
      img.data[o + 1] = Math.round(255 * Math.max(0, 1.4 * v - 0.4));
      img.data[o + 2] = Math.round(255 * (v < 0.5 ? 0.25 + v : 1.25 - v));
      img.data[o + 3] = 255;
    }
  c.getContext('2d').putImageData(img, 0, 0);
  return c;
}

function drawTimeline() {
  const canvas = document.getElementById('timeline');
  if (!canvas) return;
  const rec = view.rec,
    L = layout(canvas),
    dpr = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(L.W * dpr) || canvas.height !== Math.round(L.H * dpr)) {
    canvas.width = Math.round(L.W * dpr);
    canvas.height = Math.round(L.H * dpr);
    canvas.style.height = L.H + 'px';
  }
  const g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, L.W, L.H);
  const dur = rec.duration || 1,
    [t0, t1] = win(),
    span = L.W - L.G,
    x = (t) => L.G + ((t - t0) / (t1 - t0)) * span,
    dx = (t) => (t / (t1 - t0)) * span;
  const visible = (s) => s.end_time / 1000 >= t0 && s.start_time / 1000 <= t1;
  g.save();
  g.beginPath();
  g.rect(L.G, 0, span, L.H);
  g.clip(); // nothing of the window's neighbours spills into the gutter
  // Segment spans behind the waveform, in the speaker's colour.
  for (const s of rec.segments) {
    if (!visible(s)) continue;
    g.fillStyle = speakerColor(rec, s.speaker_id) + (s.index === view.sel ? '33' : '14');
    g.fillRect(x(s.start_time / 1000), 0, Math.max(1, dx((s.end_time - s.start_time) / 1000)), L.waveH);
  }
  const mid = L.waveH / 2,
    all = rec.peaks || [];
  const gain = 0.95 / Math.max(1e-3, ...all.map(([lo, hi]) => Math.max(-lo, hi))); // fill the height
  const d = view.detail;
  const detailed = view.win && d && Math.abs(d.t0 - t0) < 1e-6 && Math.abs(d.t1 - t1) < 1e-6;
  const peaks = detailed ? d.peaks : all,
    p0 = detailed ? t0 : 0,
    p1 = detailed ? t1 : dur;
  g.fillStyle = '#475569';
  for (let i = 0; i < peaks.length; i++) {
    const ta = p0 + (i / peaks.length) * (p1 - p0);
    if (ta > t1 || ta + (p1 - p0) / peaks.length < t0) continue;
    const px = x(ta),
      w = Math.max(1, dx((p1 - p0) / peaks.length));
    const [lo, hi] = peaks[i];
    g.fillRect(px, mid - hi * mid * gain, w, Math.max(1, (hi - lo) * mid * gain));
  }
  if (L.specH) {
    const sp = view.specImg;
    if (sp) {
      g.imageSmoothingEnabled = false;
      g.drawImage(sp.canvas, x(sp.t0), L.waveH, dx(sp.t1 - sp.t0), L.specH);
    } else {
      g.fillStyle = '#e5e7eb';
      g.fillRect(L.G, L.waveH, span, L.specH);
    }
  }
  // One lane per speaker.
  rec.speakers.forEach((spk, li) => {
    const y = L.lanesY + li * L.laneH;
    g.fillStyle = li % 2 ? '#f7f8fa' : '#fff';
    g.fillRect(L.G, y, span, L.laneH);
    for (const s of rec.segments) {
      if (s.speaker_id !== spk.speaker_id || !visible(s)) continue;
      const x0 = x(s.start_time / 1000),
        w = Math.max(2, dx((s.end_time - s.start_time) / 1000));
      g.globalAlpha = matches(s) ? 1 : 0.3;
      g.fillStyle = speakerColor(rec, s.speaker_id);
      g.fillRect(x0, y + 3, w, L.laneH - 6);
      if (s.index === view.sel) {
        g.strokeStyle = '#111827';
        g.lineWidth = 2;
        g.strokeRect(x0 - 1, y + 2, w + 2, L.laneH - 4);
        g.fillStyle = '#111827'; // drag handles on the selected segment's edges
        g.fillRect(x0 - 2, y + 1, 4, L.laneH - 2);
        g.fillRect(x0 + w - 2, y + 1, 4, L.laneH - 2);
      }
      g.globalAlpha = 1;
      if (w > 18) {
        g.fillStyle = '#fff';
        g.font = '11px system-ui, sans-serif';
        g.fillText(String(s.index), x0 + 4, y + L.laneH / 2 + 4);
      }
    }
  });
  // Time axis.
  const ay = L.H - L.axisH + 4,
    step =
      [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600].find((st) => (t1 - t0) / st <= span / 70) || 900;
  g.fillStyle = '#6b7383';
  g.font = '10.5px system-ui, sans-serif';
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
    g.fillRect(x(t), ay - 4, 1, 4);
    g.fillText(step < 1 ? fmtTime(t) : fmtTime(t).replace(/\.00$/, ''), x(t) + 2, ay + 8);
  }
  // Playhead.
  const now = Math.min(dur, player.currentTime || 0);
  if (now >= t0 && now <= t1) {
    g.fillStyle = '#dc2626';
    g.fillRect(x(now) - 0.5, 0, 1.5, L.H - L.axisH);
  }
  g.restore();
  rec.speakers.forEach((spk, li) => {
    const y = L.lanesY + li * L.laneH;
    g.fillStyle = speakerColor(rec, spk.speaker_id);
    g.fillRect(2, y + 8, 8, 8);
    g.fillStyle = '#111827';
    g.font = '11px system-ui, sans-serif';
    g.fillText(spk.speaker_id, 14, y + L.laneH / 2 + 4);
  });
  if (L.specH) {
    g.fillStyle = '#6b7383';
    g.font = '10px system-ui, sans-serif';
    g.fillText('8 kHz', 4, L.waveH + 10);
    g.fillText('0', 4, L.waveH + L.specH - 2);
  }
  const tm = document.getElementById('clock');
  if (tm) tm.textContent = fmtTime(player.currentTime || 0) + ' / ' + fmtTime(dur);
}

// Which segment edge (of the selected segment, in its lane) is under the pointer, if any.
function edgeAt(canvas, ev) {
  const seg = view.rec.segments[view.sel];
  if (!seg) return null;
  const rect = canvas.getBoundingClientRect(),
    L = layout(canvas),
    [t0, t1] = win();
  const lane = view.rec.speakers.findIndex((s) => s.speaker_id === seg.speaker_id);
  const y = ev.clientY - rect.top - L.lanesY - lane * L.laneH;
  if (y < 0 || y > L.laneH) return null;
  const px = (t) => L.G + ((t - t0) / (t1 - t0)) * (rect.width - L.G);
  const mx = ev.clientX - rect.left;
  if (Math.abs(mx - px(seg.start_time / 1000)) <= 5) return 'start_time';
  if (Math.abs(mx - px(seg.end_time / 1000)) <= 5) return 'end_time';
  return null;
}

// Dragging an edge of the selected segment moves that boundary; releasing saves it (the same
// validated, audited edit as the boxes).
function onTimelineDown(ev) {
  const canvas = ev.currentTarget,
    edge = edgeAt(canvas, ev);
  if (!edge) return;
  ev.preventDefault();
  const seg = view.rec.segments[view.sel],
    was = seg[edge];
  view.drag = { edge, seg, was };
  const move = (e) => {
    seg[edge] = Math.round(timeAt(canvas, e.clientX) * 1000);
    drawTimeline();
  };
  const up = (e) => {
    window.removeEventListener('mousemove', move);
    window.removeEventListener('mouseup', up);
    move(e);
    const to = seg[edge];
    seg[edge] = was;
    view.drag = null;
    view.justDragged = true;
    if (to !== was) save(seg, edge, String(to), was, false);
    else drawTimeline();
  };
  window.addEventListener('mousemove', move);
  window.addEventListener('mouseup', up);
}

function onTimelineHover(ev) {
  if (view.drag) return;
  ev.currentTarget.style.cursor = edgeAt(ev.currentTarget, ev) ? 'ew-resize' : 'pointer';
}

function onTimelineClick(ev) {
  if (view.justDragged) {
    view.justDragged = false;
    return;
  }
  const canvas = ev.currentTarget,
    rect = canvas.getBoundingClientRect(),
    L = layout(canvas);
  const t = timeAt(canvas, ev.clientX) * 1000;
  const y = ev.clientY - rect.top;
  const lane = Math.floor((y - L.lanesY) / L.laneH);
  const spk = y > L.lanesY && lane >= 0 && lane < L.lanes ? view.rec.speakers[lane].speaker_id : null;
  const hit = view.rec.segments.find((s) => s.start_time <= t && t <= s.end_time && (!spk || s.speaker_id === spk));
  if (hit) playSegment(hit.index);
  else {
    view.stopAt = null;
    player.currentTime = t / 1000;
  }
}

// Keep what plays in view: a segment outside the window centres it; playback past the
// window's end turns the page.
function follow(t, centre) {
  if (!view.win) return;
  const [t0, t1] = view.win;
  if (t >= t0 && t <= t1) return;
  const span = t1 - t0;
  if (centre) setWindow(t - span / 2, t + span / 2);
  else setWindow(t, t + span);
}

function select(i) {
  if (i < 0 || i >= view.rec.segments.length) return;
  view.sel = i;
  for (const row of document.querySelectorAll('.seg'))
    row.classList.toggle('selected', Number(row.dataset.index) === i);
  const row = document.querySelector(`.seg[data-index="${i}"]`);
  if (row) row.scrollIntoView({ block: 'nearest' });
  const q = new URLSearchParams(view.q);
  q.set('seg', view.rec.segments[i].key);
  history.replaceState(null, '', location.pathname + location.search + hashFor('rec', view.rec.rec, q));
  showPanel(view.rec.segments[i]);
}

function segmentRow(s) {
  const flags = Object.values(s.flags).flat();
  const kinds = Object.keys(FLAG_NAMES).filter((k) => flags.includes(k));
  return el(
    'div',
    {
      class: 'seg' + (matches(s) ? '' : ' dimmed') + (s.reviewed ? ' reviewed' : ''),
      'data-index': s.index,
      'data-key': s.key,
      onclick: () => playSegment(s.index),
    },
    el('span', { class: 'idx', text: s.index }),
    el(
      'span',
      { class: 'meta' },
      el('span', { class: 'chk', title: 'reviewed', text: s.reviewed ? '✓' : '' }),
      el(
        'span',
        { class: 'chip' },
        el('i', { style: { background: speakerColor(view.rec, s.speaker_id) } }),
        s.speaker_id + ' · ' + s.speaker_name,
      ),
      ' ' + fmtTime(s.start_time / 1000) + '–' + fmtTime(s.end_time / 1000),
      kinds.map(badge),
    ),
    el('span', { class: 'txt', text: s.text }),
  );
}

async function showRecording(recId, q, seq = routeSeq) {
  stopPlayback();
  view.q = q;
  const rec = await api('recording', { rec: recId });
  if (seq !== routeSeq) return;
  view.rec = rec;
  document.getElementById('crumb').textContent = '/ ' + rec.rec;
  const src = '/api/audio?' + new URLSearchParams({ rec: rec.rec, token: TOKEN });
  if (player.getAttribute('src') !== src) player.setAttribute('src', src);
  const canvas = el('canvas', {
    id: 'timeline',
    onclick: onTimelineClick,
    onmousedown: onTimelineDown,
    onmousemove: onTimelineHover,
  });
  canvas.addEventListener('wheel', onWheel, { passive: false });
  if (view.winRec !== rec.rec) {
    view.win = view.detail = view.specImg = null; // another recording: whole, no stale detail
    view.winRec = rec.rec;
  }
  const specBox = el('input', { type: 'checkbox', id: 'spec' });
  specBox.checked = !!view.spec;
  specBox.addEventListener('change', () => {
    view.spec = specBox.checked;
    specBox.blur(); // space stays play/pause
    view.specImg = null;
    drawTimeline();
    refreshDetail();
  });
  const scroll = el('input', { type: 'range', id: 'scroll', min: 0, value: 0, title: 'scroll the zoomed waveform' });
  scroll.addEventListener('input', () => {
    const [t0, t1] = win();
    setWindow(Number(scroll.value), Number(scroll.value) + (t1 - t0));
  });
  const fieldSel = el(
    'select',
    { id: 'r-field' },
    el('option', { value: '', text: 'any field' }),
    [...rec.fields, 'text', 'text_and_paralanguage', 'speaker', 'start_time', 'end_time'].map((f) =>
      el('option', { value: f, text: f }),
    ),
  );
  const flagSel = el(
    'select',
    { id: 'r-flag' },
    Object.keys(FLAG_NAMES).map((f) => el('option', { value: f, text: f })),
  );
  fieldSel.value = q.get('field') || '';
  flagSel.value = q.get('flag') || 'relabeled';
  const onFilter = () => {
    const nq = new URLSearchParams();
    if (fieldSel.value) {
      nq.set('field', fieldSel.value);
      nq.set('flag', flagSel.value);
    }
    if (sortSel.value) nq.set('sort', sortSel.value);
    view.q = nq;
    view.sort = sortSel.value;
    list.replaceChildren(...ordered(rec.segments).map(segmentRow));
    select(view.sel);
    const n = rec.segments.filter(matches).length;
    count.textContent = fieldSel.value
      ? `${n} of ${rec.segments.length} segments match`
      : `${rec.segments.length} segments`;
  };
  const sortSel = el(
    'select',
    { id: 'sort' },
    el('option', { value: '', text: 'time order' }),
    el('option', { value: 'any', text: 'least confident field first' }),
    el('option', { value: 'voice', text: 'least like its speaker\'s voice first' }),
    rec.fields
      .filter((f) => !rec.composed.includes(f))
      .map((f) => el('option', { value: f, text: 'least confident ' + f + ' first' })),
  );
  sortSel.value = q.get('sort') || '';
  fieldSel.addEventListener('change', onFilter);
  flagSel.addEventListener('change', onFilter);
  sortSel.addEventListener('change', onFilter);
  const speed = el(
    'select',
    { id: 'speed', title: 'playback speed' },
    [0.5, 0.75, 1, 1.25, 1.5, 2].map((r) => el('option', { value: r, text: r + '×' })),
  );
  speed.value = String(player.defaultPlaybackRate || 1);
  speed.addEventListener('change', () => {
    player.defaultPlaybackRate = player.playbackRate = Number(speed.value);
  });
  const loopBox = el('input', { type: 'checkbox', id: 'loop' });
  loopBox.checked = view.loop;
  loopBox.addEventListener('change', () => {
    view.loop = loopBox.checked;
    loopBox.blur(); // space stays play/pause
  });
  const done = rec.segments.filter((s) => s.reviewed).length;
  const count = el('span', { class: 'dim' });
  const list = el('div', { class: 'card seglist', id: 'segments' });
  view.panel = el('div', { class: 'card panel', id: 'panel' });
  app.replaceChildren(
    ...[
      el(
        'div',
        { class: 'rechead' },
        el('h1', { text: rec.rec }),
        el('span', { class: 'status ' + rec.status, text: rec.status }),
        el('span', {
          class: 'dim',
          text: `${fmtDur(rec.duration)} · ${rec.segments.length} segments · labels ${rec.label_lang}`,
        }),
        el(
          'span',
          { class: 'progress', id: 'progress', title: 'segments marked reviewed' },
          el('meter', { min: 0, max: rec.segments.length || 1, value: done }),
          ` ${done} / ${rec.segments.length} reviewed`,
        ),
        el(
          'div',
          { class: 'chips' },
          rec.speakers.map((s) =>
            el(
              'span',
              { class: 'chip' },
              el('i', { style: { background: speakerColor(rec, s.speaker_id) } }),
              s.speaker_id + ' · ' + s.speaker_name,
            ),
          ),
        ),
        el('span', { class: 'spacer' }),
        el('a', {
          href: '/api/output?' + new URLSearchParams({ rec: rec.rec, token: TOKEN }),
          target: '_blank',
          rel: 'noopener',
          text: 'output JSON',
        }),
      ),
      rec.audio_error ? el('p', { class: 'card', text: 'audio unavailable: ' + rec.audio_error }) : null,
      orphanedList(rec),
      deletedList(rec),
      addForm(rec),
      el(
        'div',
        { class: 'card timeline' },
        canvas,
        scroll,
        el(
          'div',
          { class: 'transport' },
          el('button', { id: 'play', onclick: togglePlay, text: 'play / pause' }),
          el('span', { class: 'time', id: 'clock' }),
          el('label', { class: 'opt' }, loopBox, ' loop'),
          el('label', { class: 'opt' }, specBox, ' spectrogram'),
          el('button', { id: 'zoom-in', title: 'zoom in (+, Ctrl+wheel)', onclick: () => zoom(0.5), text: '+' }),
          el('button', { id: 'zoom-out', title: 'zoom out (-)', onclick: () => zoom(2), text: '−' }),
          el('button', { id: 'zoom-fit', title: 'whole recording (0)', onclick: () => setWindow(0, Infinity), text: 'fit' }),
          el('span', { class: 'dim', id: 'zoom-level' }),
          el('label', { class: 'opt' }, 'speed ', speed),
          el(
            'span',
            { class: 'hint' },
            el('kbd', { text: 'space' }),
            ' play/pause  ',
            el('kbd', { text: '←' }),
            ' ',
            el('kbd', { text: '→' }),
            ' previous/next segment  ',
            el('kbd', { text: 'r' }),
            ' reviewed  ',
            el('kbd', { text: 'n' }),
            ' next doubtful  ',
            el('kbd', { text: 'l' }),
            ' loop  ',
            el('kbd', { text: 's' }),
            ' split at playhead  ',
            el('kbd', { text: 'a' }),
            ' add segment  ',
            el('kbd', { text: 'm' }),
            el('kbd', { text: 'f' }),
            ' gender  ',
            el('kbd', { text: '1' }),
            '–',
            el('kbd', { text: '5' }),
            ' age  ',
            el('kbd', { text: '+' }),
            el('kbd', { text: '-' }),
            el('kbd', { text: '0' }),
            ' zoom',
          ),
        ),
      ),
      el(
        'div',
        { class: 'toolbar' },
        el('label', { text: 'highlight segments where' }),
        fieldSel,
        el('label', { text: 'is' }),
        flagSel,
        count,
        el('span', { class: 'spacer' }),
        el('label', { text: 'list' }),
        sortSel,
        el('button', { id: 'next-doubtful', onclick: nextDoubtful, text: 'next doubtful ▸' }),
      ),
      el('div', { class: 'cols' }, list, view.panel),
    ].filter(Boolean),
  );
  const want = q.get('seg');
  const idx = want ? rec.segments.findIndex((s) => s.key === want) : -1;
  view.sel = idx >= 0 ? idx : 0;
  onFilter();
  const [w0, w1] = win();
  setWindow(w0, w1); // the scroll bar and the detail for the window kept from before a redraw
  drawTimeline();
}

// How doubtful a segment is: the latest confidence of the sorted field, or its least confident field;
// for "voice", how little its voice sounds like its speaker's other segments (priors/voice_fit.py).
function doubt(s) {
  if (view.sort === 'voice') return typeof s.voice_similarity === 'number' ? s.voice_similarity : Infinity;
  const c = s.confidence || {};
  const values = view.sort && view.sort !== 'any' ? [c[view.sort]] : Object.values(c);
  const known = values.filter((v) => typeof v === 'number');
  return known.length ? Math.min(...known) : Infinity;
}

function ordered(segments) {
  if (!view.sort) return segments;
  return segments.slice().sort((a, b) => doubt(a) - doubt(b) || a.index - b.index);
}

// The least confident segment not yet marked reviewed (other than the one shown), and play it.
function nextDoubtful() {
  const rest = view.rec.segments.filter((s) => !s.reviewed && s.index !== view.sel);
  if (!rest.length) {
    toast('every other segment is marked reviewed');
    return;
  }
  rest.sort((a, b) => doubt(a) - doubt(b) || a.index - b.index);
  playSegment(rest[0].index);
}

// Value hotkeys for the closed fields of the selected segment: m / f set the gender, 1-5 the
// age (child .. elderly), saved at once like a chosen value; the vocabularies are the
// recording's label language's (index-aligned with English).
function valueKey(ev) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return false;
  const seg = view.rec.segments[view.sel];
  if (!seg) return false;
  const v = view.rec.vocab;
  let field = null,
    value = null;
  if (ev.key === 'm' || ev.key === 'f') [field, value] = ['gender', v.gender[ev.key === 'm' ? 0 : 1]];
  else if (/^[1-5]$/.test(ev.key)) [field, value] = ['age', v.age[Number(ev.key) - 1]];
  if (!field) return false;
  if (seg[field] === value) toast(`${field} is already ${value}`);
  else save(seg, field, value, seg[field], false); // focus stays off the boxes: the next key is a hotkey too
  return true;
}

// Delete / restore a segment, or merge it with the next one (same speaker); then redraw on `keep`.
async function structural(path, body, message, keep) {
  try {
    await api(path, null, { rec: view.rec.rec, ...body });
    toast(message);
    const q = new URLSearchParams(view.q);
    if (keep) q.set('seg', keep);
    await showRecording(view.rec.rec, q);
  } catch (e) {
    toast(e.message, true);
  }
}

function deletedList(rec) {
  if (!rec.deleted || !rec.deleted.length) return null;
  return el(
    'details',
    { class: 'card deleted', id: 'deleted', open: true },
    el('summary', { text: `${rec.deleted.length} deleted segment(s)` }),
    el(
      'ul',
      {},
      rec.deleted.map((d) =>
        el(
          'li',
          { 'data-key': d.key },
          el('button', {
            text: 'restore',
            onclick: () => structural('delete', { key: d.key, deleted: false }, `${d.key} restored`, d.key),
          }),
          ` ${d.key} ${fmtTime(d.start_time / 1000)}–${fmtTime(d.end_time / 1000)} “${d.text}” `,
          el('span', { class: 'dim', text: `deleted by ${d.by}, ${utc(d.at)} UTC` }),
        ),
      ),
    ),
  );
}

async function markReviewed(seg, reviewed) {
  try {
    await api('review', null, { rec: view.rec.rec, key: seg.key, reviewed });
    toast(reviewed ? `segment ${seg.index} marked reviewed` : `segment ${seg.index} not reviewed`);
    const q = new URLSearchParams(view.q);
    q.set('seg', seg.key);
    await showRecording(view.rec.rec, q);
  } catch (e) {
    toast(e.message, true);
  }
}

// Decisions made on segments that a rerun removed: shown, never applied to another utterance.
function orphanedList(rec) {
  if (!rec.orphaned || !rec.orphaned.length) return null;
  return el(
    'details',
    { class: 'card orphaned', id: 'orphaned', open: true },
    el('summary', {
      text: `${rec.orphaned.length} human decision(s) orphaned: their segment is gone after a rerun, so they apply to none`,
    }),
    el(
      'ul',
      {},
      rec.orphaned.map((d) => {
        const a = d.anchor;
        const where = a ? `${fmtTime(a.start)}–${fmtTime(a.end)}, speaker ${a.speaker}: “${a.text}”` : d.key;
        return el(
          'li',
          { 'data-id': d.id },
          el('b', { text: d.field }),
          d.field === 'segment'
            ? `: ${d.note} ${d.new.start_time}–${d.new.end_time} ms, speaker ${d.new.speaker}: “${d.new.row.text}” `
            : `: ${JSON.stringify(d.old)} → ${JSON.stringify(d.new)} `,
          el('span', { class: 'dim', text: `made on ${d.key} (${where}) by ${d.who}, ${utc(d.at)} UTC (#${d.id})` }),
        );
      }),
    ),
  );
}

// -- segment panel -----------------------------------------------------------------------

// Typed but unsaved values live here (and in sessionStorage), by recording, segment and field:
// a save of another field, another segment or a reload redraws the panel without losing them.
const drafts = new Map(JSON.parse(sessionStorage.getItem('sa-drafts') || '[]'));
const conflicts = new Map(); // draft key -> {current, by}: the value another reviewer saved first
const draftKey = (seg, field) => `${view.rec.rec}|${seg.key}|${field}`;
function keepDrafts() {
  sessionStorage.setItem('sa-drafts', JSON.stringify([...drafts]));
}
window.addEventListener('beforeunload', (ev) => {
  if (!drafts.size) return;
  ev.preventDefault(); // the browser asks before the typed values are lost
  ev.returnValue = '';
});

async function save(seg, field, value, expect, focus = true) {
  const k = draftKey(seg, field);
  try {
    const res = await fetch('/api/edit', {
      method: 'POST',
      headers: { 'X-Session-Token': TOKEN, 'Content-Type': 'application/json' },
      body: JSON.stringify({ rec: view.rec.rec, key: seg.key, field, value, expect }),
    });
    const data = await res.json().catch(() => ({ error: res.statusText }));
    if (res.status === 409 && 'current' in data) {
      conflicts.set(k, { current: data.current, by: data.by });
      toast(`${field}: ${data.error}`, true);
      await redraw(seg, field, focus);
      return;
    }
    if (!res.ok) throw new Error(data.error || res.statusText);
    drafts.delete(k);
    conflicts.delete(k);
    keepDrafts();
    // The toast confirms what the page shows: only once the recording is drawn again (a reviewer
    // or a test acting on "saved" must not meet the page half redrawn).
    await redraw(seg, field, focus);
    toast(`saved ${field}`);
  } catch (e) {
    toast(`${field}: ${e.message}`, true);
  }
}

// The recording again from the server, the same segment selected and focus back in the field.
async function redraw(seg, field, focus = true) {
  const q = new URLSearchParams(view.q);
  q.set('seg', seg.key);
  view.focus = focus ? field : null;
  await showRecording(view.rec.rec, q);
  await view.panelReady;
}

function editor(seg, field, value, kind, options) {
  let input;
  if (kind === 'select') {
    input = el(
      'select',
      { 'data-field': field },
      options.map(([v, label]) => el('option', { value: v, text: label })),
    );
  } else if (kind === 'textarea') {
    input = el('textarea', { 'data-field': field, rows: 2 });
  } else {
    input = el('input', { 'data-field': field, type: 'text', inputmode: kind === 'number' ? 'numeric' : null });
  }
  const k = draftKey(seg, field);
  input.value = drafts.has(k) ? drafts.get(k) : value;
  const button = el('button', { class: 'primary', text: 'save', disabled: true, 'data-save': field });
  const wrap = el('div', { class: 'editor' }, input, button);
  const changed = () => {
    const dirty = String(input.value) !== String(value);
    button.disabled = !dirty;
    wrap.classList.toggle('draft', dirty);
    if (dirty) drafts.set(k, input.value);
    else drafts.delete(k);
    keepDrafts();
  };
  input.addEventListener('input', changed);
  input.addEventListener('change', changed);
  const submit = () => {
    if (button.disabled) return;
    let v = input.value;
    if (kind === 'select' && v === '__new__') {
      v = (window.prompt('new speaker label (letters, digits, _ . -)') || '').trim();
      if (!v) return;
    }
    save(seg, field, v, value); // `value`: what this page showed, so a stale save is refused
  };
  button.addEventListener('click', submit);
  // Keyboard: Enter saves (Ctrl+Enter in a text area, where Enter is a new line); Escape drops the draft.
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && (kind !== 'textarea' || ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      submit();
    } else if (ev.key === 'Escape') {
      input.value = value;
      changed();
    }
  });
  changed();
  const clash = conflicts.get(k);
  if (clash)
    wrap.append(
      el('div', {
        class: 'conflict',
        'data-conflict': field,
        text: `saved meanwhile${clash.by ? ' by ' + clash.by : ''}: ${JSON.stringify(clash.current)} (yours is in the box)`,
      }),
    );
  if (view.focus === field && seg.index === view.sel) {
    view.focus = null;
    requestAnimationFrame(() => input.focus());
  }
  return wrap;
}

function fieldCard(seg, field, trail) {
  const kinds = seg.flags[field] || [];
  const conf = trail.confidence;
  const vocab = view.rec.vocab[field];
  const value = seg[field];
  const cited = new Set(trail.cites || []);
  const details = el('details', {}, el('summary', { text: 'contract, evidence, review rounds' }));
  if (trail.composed)
    details.append(
      el('p', { class: 'dim', text: 'composed in finalize from the reviewed fields, transcript and admitted context' }),
    );
  if (trail.contract) {
    const c = trail.contract;
    details.append(
      el(
        'dl',
        { class: 'kv' },
        ['objective', 'value_format', 'admissible_evidence', 'priority', 'context_scope', 'conflict_rule'].map((k) => [
          el('dt', { text: k.replace(/_/g, ' ') }),
          el('dd', { text: Array.isArray(c[k]) ? c[k].join(', ') || '(none)' : c[k] }),
        ]),
      ),
    );
  }
  if (trail.evidence.length) {
    details.append(
      el(
        'table',
        { class: 'ev' },
        trail.evidence.map((e) =>
          el(
            'tr',
            { class: cited.has(e.name) ? 'cited' : '' },
            el('td', { text: e.name }),
            el('td', {
              text:
                (typeof e.value === 'object' ? JSON.stringify(e.value) : String(e.value)) +
                (e.unit ? ' ' + e.unit : ''),
            }),
            el('td', {
              class: 'dim',
              text: `${e.source}; ${e.extractor || '?'}; rel ${Number(e.reliability).toFixed(2)}`,
            }),
          ),
        ),
      ),
    );
  } else if (!trail.composed) details.append(el('p', { class: 'dim', text: 'no evidence admitted' }));
  if (trail.speaker_history)
    details.append(el('p', { class: 'dim', text: 'speaker history: ' + JSON.stringify(trail.speaker_history) }));
  for (const r of trail.rounds) {
    const v = r.verdict;
    details.append(
      el(
        'div',
        { class: 'round ' + (v ? (v.accepted ? 'accepted' : 'rejected') : '') },
        el(
          'div',
          {},
          el('b', { text: `round ${r.round}: ` }),
          String(r.value),
          el('span', {
            class: 'dim',
            text: ` (confidence ${Number(r.confidence).toFixed(2)}, ${r.status}, ${r.backend || '?'})`,
          }),
        ),
        r.cites.length ? el('div', { class: 'dim', text: 'cites: ' + r.cites.join(', ') }) : null,
        r.rationale ? el('div', { class: 'dim', text: 'rationale: ' + r.rationale }) : null,
        r.error ? el('div', { class: 'dim', text: 'error: ' + r.error }) : null,
        v
          ? el('div', {
              text:
                `review: ${v.accepted ? 'accepted' : 'REJECTED'} - ${v.reason}` +
                (v.accepted ? '' : ` · request: ${v.request}`),
            })
          : null,
      ),
    );
  }
  if (trail.review_skipped) details.append(el('p', { class: 'dim', text: 'review skipped (--no-review)' }));
  const ed = vocab
    ? editor(
        seg,
        field,
        value,
        'select',
        vocab.map((v) => [v, v]),
      )
    : editor(seg, field, value, field === 'caption' || field === 'contextual_inference' ? 'textarea' : 'text');
  const wide = trail.composed ? ' wide' : '';
  return el(
    'div',
    { class: 'field ' + kinds.join(' ') + wide, 'data-field-card': field },
    el(
      'div',
      { class: 'fhead' },
      el('span', { class: 'fname', text: field }),
      kinds.map(badge),
      el('span', { class: 'conf', text: conf === null ? '' : 'confidence ' + conf.toFixed(2) }),
    ),
    conf === null
      ? null
      : el(
          'div',
          { class: 'confbar' },
          el('div', { style: { width: `${Math.round(100 * Math.max(0, Math.min(1, conf)))}%` } }),
        ),
    ed,
    trail.cites && trail.cites.length ? el('div', { class: 'cites', text: 'cites: ' + trail.cites.join(', ') }) : null,
    details,
  );
}

// Split the selected segment at a time, or add one on an unlabelled stretch; both answer the
// new segment's key, which the redraw selects.
async function createSegment(path, body, message) {
  try {
    const got = await api(path, null, { rec: view.rec.rec, ...body });
    const q = new URLSearchParams(view.q);
    q.set('seg', got.key);
    await showRecording(view.rec.rec, q); // the new segment selected, then told
    toast(message(got));
    return true;
  } catch (e) {
    toast(e.message, true);
    return false;
  }
}

// The split form: a time (the playhead where it is inside the segment, else the middle) and,
// optionally, the text of each part; empty parts divide the transcript at the nearest word.
function splitForm(seg) {
  const t = Math.round((player.currentTime || 0) * 1000);
  const inside = seg.start_time < t && t < seg.end_time;
  const at = el('input', {
    id: 'split-at',
    type: 'text',
    inputmode: 'numeric',
    title: 'split time (ms)',
    value: inside ? t : Math.round((seg.start_time + seg.end_time) / 2),
  });
  const first = el('input', { id: 'split-first', type: 'text', placeholder: 'first part’s text (optional)' });
  const second = el('input', { id: 'split-second', type: 'text', placeholder: 'second part’s text (optional)' });
  const go = async () => {
    const body = { key: seg.key, at: at.value };
    if (first.value.trim() || second.value.trim()) body.texts = [first.value, second.value];
    const ok = await createSegment('split', body, (got) => `segment ${seg.index} split at ${at.value} ms: new ${got.key}`);
    if (!ok && !body.texts) {
      first.value = seg.text; // no word times: the reviewer divides the text
      first.focus();
    }
  };
  for (const box of [at, first, second])
    box.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') {
        ev.preventDefault();
        go();
      }
    });
  return el(
    'div',
    { class: 'row split' },
    el('label', { text: 'split at (ms)' }),
    at,
    first,
    second,
    el('button', { id: 'split-seg', text: 'split', title: 'split here (s: at the playhead)', onclick: go }),
  );
}

// The add form (a): a stretch, a speaker (or a new label) and what was said.
function addForm(rec) {
  const t = Math.round((player.currentTime || 0) * 1000);
  const start = el('input', { id: 'add-start', type: 'text', inputmode: 'numeric', title: 'start (ms)', value: t });
  const end = el('input', { id: 'add-end', type: 'text', inputmode: 'numeric', title: 'end (ms)', value: t + 1000 });
  const speaker = el(
    'select',
    { id: 'add-speaker' },
    rec.speakers.map((s) => el('option', { value: s.raw, text: `${s.speaker_id} · ${s.speaker_name}` })),
    el('option', { value: '__new__', text: 'new speaker…' }),
  );
  const text = el('input', { id: 'add-text', type: 'text', placeholder: 'what is said' });
  const go = () => {
    let spk = speaker.value;
    if (spk === '__new__') {
      spk = (window.prompt('new speaker label (letters, digits, _ . -)') || '').trim();
      if (!spk) return;
    }
    createSegment(
      'add',
      { start: start.value, end: end.value, speaker: spk, text: text.value },
      (got) => `segment ${got.key} added`,
    );
  };
  for (const box of [start, end, text])
    box.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') {
        ev.preventDefault();
        go();
      }
    });
  return el(
    'details',
    { class: 'card addseg', id: 'add-form' },
    el('summary', { text: 'add a segment (a)' }),
    el(
      'div',
      { class: 'row' },
      el('label', { text: 'from (ms)' }),
      start,
      el('label', { text: 'to' }),
      end,
      speaker,
      text,
      el('button', { id: 'add-seg', class: 'primary', text: 'add', onclick: go }),
    ),
  );
}

// The segment panel, drawn once its data arrives; view.panelReady settles when it is drawn (a save
// confirms itself only then).
function showPanel(seg) {
  view.panelReady = drawPanel(seg);
  return view.panelReady;
}

async function drawPanel(seg) {
  const panel = view.panel;
  const token = (showPanel.n = (showPanel.n || 0) + 1);
  let data;
  try {
    data = await api('segment', { rec: view.rec.rec, key: seg.key });
  } catch (e) {
    toast(e.message, true);
    return;
  }
  if (token !== showPanel.n) return; // a newer selection won
  const speakers = view.rec.speakers.map((s) => [s.raw, `${s.speaker_id} · ${s.speaker_name}`]);
  if (!speakers.some(([raw]) => raw === seg.raw_speaker)) speakers.push([seg.raw_speaker, seg.speaker_id]);
  speakers.push(['__new__', 'new speaker…']);
  const audit = data.decisions.length
    ? el(
        'ul',
        { class: 'audit', id: 'audit' },
        data.decisions
          .slice()
          .reverse()
          .map((d) =>
            el(
              'li',
              {},
              el('b', { text: d.field }),
              d.field === 'segment' // the decision that made this segment
                ? `: made (${d.note}) ${d.new.start_time}–${d.new.end_time} ms, speaker ${d.new.speaker} `
                : `: ${JSON.stringify(d.old)} → ${JSON.stringify(d.new)} `,
              el('span', {
                class: 'dim',
                text: `by ${d.who}, ${utc(d.at)} UTC (#${d.id})`,
              }),
            ),
          ),
      )
    : el('p', { class: 'dim', id: 'audit', text: 'no human decision on this segment yet' });
  panel.dataset.key = seg.key; // which segment the panel shows, once it is drawn
  panel.replaceChildren(
    el(
      'h2',
      {},
      `Segment ${seg.index}`,
      el('span', { class: 'dim mono', text: seg.key }),
      el('span', { class: 'dim', text: `${fmtTime(seg.start_time / 1000)}–${fmtTime(seg.end_time / 1000)}` }),
      el('button', { text: '▶ play segment', id: 'play-seg', onclick: () => playSegment(seg.index) }),
      el('button', {
        id: 'mark-reviewed',
        class: seg.reviewed ? 'done' : 'primary',
        text: seg.reviewed ? '✓ reviewed (undo)' : 'mark reviewed',
        onclick: () => markReviewed(seg, !seg.reviewed),
      }),
      el('button', {
        id: 'merge-next',
        title: 'join with the next segment (same speaker)',
        text: 'merge with next',
        onclick: () => structural('merge', { key: seg.key }, `merged segment ${seg.index} with the next`, seg.key),
      }),
      el('button', {
        id: 'delete-seg',
        title: 'remove from the output (restorable)',
        text: 'delete',
        onclick: () => {
          const near = view.rec.segments[seg.index + 1] || view.rec.segments[seg.index - 1];
          structural('delete', { key: seg.key, deleted: true }, `segment ${seg.index} deleted`, near && near.key);
        },
      }),
    ),
    el(
      'section',
      {},
      el('h3', { text: 'Transcript' }),
      el('div', { class: 'row' }, el('label', { text: 'text' })),
      editor(seg, 'text', seg.text, 'textarea'),
      el('div', { class: 'row' }, el('label', { text: 'text and paralanguage' })),
      editor(seg, 'text_and_paralanguage', seg.text_and_paralanguage, 'textarea'),
    ),
    el(
      'section',
      {},
      el('h3', { text: 'Speaker and boundaries' }),
      el(
        'div',
        { class: 'row' },
        el('label', { text: 'speaker' }),
        editor(seg, 'speaker', seg.raw_speaker, 'select', speakers),
      ),
      el(
        'div',
        { class: 'row' },
        el('label', { text: 'start (ms)' }),
        editor(seg, 'start_time', seg.start_time, 'number'),
      ),
      el('div', { class: 'row' }, el('label', { text: 'end (ms)' }), editor(seg, 'end_time', seg.end_time, 'number')),
      splitForm(seg),
    ),
    el(
      'section',
      {},
      el('h3', { text: 'Attributes' }),
      el(
        'div',
        { class: 'fields' },
        view.rec.fields.map((f) => fieldCard(seg, f, data.trails[f])),
      ),
    ),
    el('section', {}, el('h3', { text: 'Audit trail (human decisions)' }), audit),
  );
}

// -- keyboard and routing ----------------------------------------------------------------

document.addEventListener('keydown', (ev) => {
  if (!view.rec || parseHash().view !== 'rec') return;
  const tag = (ev.target.tagName || '').toLowerCase();
  if (tag === 'input' || tag === 'textarea' || tag === 'select' || ev.target.isContentEditable) return;
  if (ev.key === ' ') {
    ev.preventDefault();
    togglePlay();
  } else if (ev.key === 'ArrowRight') {
    ev.preventDefault();
    playSegment(Math.min(view.rec.segments.length - 1, view.sel + 1));
  } else if (ev.key === 'ArrowLeft') {
    ev.preventDefault();
    playSegment(Math.max(0, view.sel - 1));
  } else if (ev.key === 'r' && !ev.ctrlKey && !ev.metaKey) {
    const seg = view.rec.segments[view.sel];
    if (seg) markReviewed(seg, !seg.reviewed);
  } else if (ev.key === 'n' && !ev.ctrlKey && !ev.metaKey) {
    nextDoubtful();
  } else if (valueKey(ev)) {
    ev.preventDefault();
  } else if ((ev.key === '+' || ev.key === '=') && !ev.ctrlKey && !ev.metaKey) {
    const seg = view.rec.segments[view.sel]; // zoom in on the selected segment, centred
    const [t0, t1] = win(),
      span = (t1 - t0) / 2;
    if (seg) {
      const c = (seg.start_time + seg.end_time) / 2000;
      setWindow(c - span / 2, c + span / 2);
    } else zoom(0.5);
  } else if (ev.key === '-' && !ev.ctrlKey && !ev.metaKey) {
    zoom(2);
  } else if (ev.key === '0' && !ev.ctrlKey && !ev.metaKey) {
    setWindow(0, Infinity);
  } else if (ev.key === 'l' && !ev.ctrlKey && !ev.metaKey) {
    const box = document.getElementById('loop');
    if (box) box.click();
  } else if (ev.key === 's' && !ev.ctrlKey && !ev.metaKey) {
    const seg = view.rec.segments[view.sel],
      t = Math.round(player.currentTime * 1000),
      at = document.getElementById('split-at');
    if (!seg || !at) return;
    if (!(seg.start_time < t && t < seg.end_time)) {
      toast(`the playhead (${t} ms) is not inside segment ${seg.index}: play or click into it first`, true);
      return;
    }
    at.value = t;
    document.getElementById('split-seg').click();
  } else if (ev.key === 'a' && !ev.ctrlKey && !ev.metaKey) {
    ev.preventDefault();
    const form = document.getElementById('add-form'),
      t = Math.round(player.currentTime * 1000);
    form.open = true;
    document.getElementById('add-start').value = t;
    document.getElementById('add-end').value = t + 1000;
    document.getElementById('add-text').focus();
  }
});

let routed = null;
async function route() {
  const r = parseHash();
  const id = r.view + ':' + (r.rec || '');
  if (routed === id && r.view === 'rec') return; // same recording: selection changes only
  routed = id;
  const seq = ++routeSeq;
  try {
    if (r.view === 'rec') {
      await showRecording(r.rec, r.q, seq);
    } else if (r.view === 'voices') {
      view.rec = null;
      await showVoices(seq);
    } else {
      view.rec = null;
      await showCorpus(r.q, seq);
    }
  } catch (e) {
    if (seq !== routeSeq) return;
    app.replaceChildren(
      el('p', { class: 'card', text: 'error: ' + e.message }),
      el('a', { href: '#/', text: 'back to the corpus' }),
    );
  }
}

window.addEventListener('hashchange', route);
window.addEventListener('resize', () => view.rec && drawTimeline());
requestAnimationFrame(tick);
route();

(function () {
'use strict';
var D = JSON.parse(document.getElementById('data').textContent);
var N = D.ev.dt.length, S = D.strings;
var ts = new Float64Array(N), tr = new Int32Array(N), tx = new Int32Array(N), kind = new Uint8Array(N), dur = {};
(function () {
  var t = 0, next = 0;
  for (var i = 0; i < N; i++) {
    t += D.ev.dt[i]; ts[i] = t; tr[i] = D.ev.tr[i];
    var back = D.ev.tx[i]; tx[i] = back === 0 ? next++ : next - back;
  }
  D.marks.forEach(function (m) { kind[m[0]] = m[1]; if (m.length > 2) dur[m[0]] = m[2]; });
  D.ev = null;
})();
var KINDS = [
  {key: 'record', name: 'record', color: '#3367d6'},
  {key: 'crash', name: 'crash', color: '#d50000'},
  {key: 'death', name: 'death (SIGKILL, OOM, no GOODBYE)', color: '#111'},
  {key: 'dump', name: 'stack dump', color: '#ef6c00'},
  {key: 'exit', name: 'exit', color: '#2e7d32'},
  {key: 'collective', name: 'collective call (enqueue to completion)', color: '#6a1b9a'}];
var HIT = '#e040fb', FADED = '#c5c9d3';

// The hierarchy: host > process > track. Each list holds event indices in time order.
var procs = D.procs.map(function (p, i) {
  return {i: i, name: p[0], pid: p[1], device: !!p[2], label: p[2] ? p[0] : p[0] + ' (' + p[1] + ')', tracks: [], open: true};
});
var tracks = D.tracks.map(function (t, i) {
  var o = {i: i, proc: procs[t[0]], name: t[1]};
  o.proc.tracks.push(o);
  return o;
});
procs.forEach(function (p) {
  p.tracks.sort(function (a, b) { return (a.name !== 'events') - (b.name !== 'events') || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0); });
});
var host = {label: D.host, open: true};
function lists(pick) {  // per track and per process: [records, other marks] of the events pick() keeps
  var nt = tracks.length, count = new Int32Array(2 * (nt + procs.length)), i;
  for (i = 0; i < N; i++) if (pick(i)) { var s = kind[i] ? 1 : 0; count[2 * tr[i] + s]++; count[2 * (nt + tracks[tr[i]].proc.i) + s]++; }
  var out = [], fill = new Int32Array(count.length);
  for (i = 0; i < count.length; i++) out.push(new Int32Array(count[i]));
  for (i = 0; i < N; i++) if (pick(i)) {
    var sp = kind[i] ? 1 : 0, a = 2 * tr[i] + sp, b = 2 * (nt + tracks[tr[i]].proc.i) + sp;
    out[a][fill[a]++] = i; out[b][fill[b]++] = i;
  }
  tracks.forEach(function (t) { t.lists = [out[2 * t.i], out[2 * t.i + 1]]; });
  procs.forEach(function (p) { p.lists = [out[2 * (nt + p.i)], out[2 * (nt + p.i) + 1]]; });
}
function all() { return true; }
lists(all);
procs.forEach(function (p) {
  p.worst = 0;
  for (var k = 0; k < p.lists[1].length; k++) { var m = kind[p.lists[1][k]]; if (m === 1 || (m === 2 && p.worst !== 1)) p.worst = m; }
});
procs.forEach(function (p) { p.all = p.lists; });
tracks.forEach(function (t) { t.all = t.lists; });

var tMin = N ? ts[0] : 0, tMax = N ? ts[N - 1] : 1;
if (tMax - tMin < 10) { tMin -= 5; tMax += 5; }
var pad = (tMax - tMin) * 0.02;
var v0 = tMin - pad, v1 = tMax + pad, full = [v0, v1];
var query = '', hits = 0, hitOf = null, selected = -1, scrollY = 0, mouseX = -1;

var chart = document.getElementById('chart'), ctx = chart.getContext('2d');
var over = document.getElementById('overview'), octx = over.getContext('2d');
var detail = document.getElementById('detail');
var LABEL_W = 260, RULER_H = 24, ROW_H = {host: 20, proc: 24, track: 22};
var W = 800, H = 400, dpr = window.devicePixelRatio || 1;
function X(t) { return LABEL_W + (t - v0) / (v1 - v0) * (W - LABEL_W); }
function T(x) { return v0 + (x - LABEL_W) / (W - LABEL_W) * (v1 - v0); }
function lb(L, t, lo, hi) { while (lo < hi) { var m = (lo + hi) >>> 1; if (ts[L[m]] < t) lo = m + 1; else hi = m; } return lo; }

function pad2(n, w) { return String(n).padStart(w || 2, '0'); }
function parts(t) {  // local time (as stamped) of t, microseconds after t0
  var abs = D.t0 + Math.round(t), us = ((abs % 1000) + 1000) % 1000, d = new Date((abs - us) / 1000 + D.tz * 1000);
  return {d: d.getUTCFullYear() + '-' + pad2(d.getUTCMonth() + 1) + '-' + pad2(d.getUTCDate()),
          hm: pad2(d.getUTCHours()) + ':' + pad2(d.getUTCMinutes()), s: pad2(d.getUTCSeconds()),
          ms: pad2(d.getUTCMilliseconds(), 3), us: pad2(us, 3)};
}
function stamp(t) { var p = parts(t); return p.d + ' ' + p.hm + ':' + p.s + '.' + p.ms + '.' + p.us; }
var STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7,
             15e6, 3e7, 6e7, 12e7, 3e8, 6e8, 9e8, 18e8, 36e8, 72e8, 108e8, 216e8, 432e8, 864e8, 1728e8, 6048e8, 24192e8];
function tickLabel(t, step) {
  var p = parts(t);
  if (step >= 864e8) return p.d;
  if (step >= 6e7) return p.hm === '00:00' ? p.d.slice(5) : p.hm;
  if (step >= 1e6) return p.hm + ':' + p.s;
  if (step >= 1e3) return p.hm + ':' + p.s + '.' + p.ms;
  return p.s + '.' + p.ms + '.' + p.us;
}
function ticks() {
  var span = v1 - v0, px = W - LABEL_W, out = [], k;
  for (k = 0; k < STEPS.length - 1; k++) {
    var minPx = STEPS[k] < 1e3 ? 110 : STEPS[k] < 1e6 ? 100 : 80;
    if (STEPS[k] / span * px >= minPx) break;
  }
  var step = STEPS[k], shift = D.t0 + D.tz * 1e6;  // steps align to the local clock
  var first = Math.ceil((v0 + shift) / step) * step - shift;
  for (var t = first; t <= v1 && out.length < 200; t += step) out.push({t: t, label: tickLabel(t, step)});
  return {step: step, list: out};
}
function human(us) {
  if (us >= 864e8) return (us / 864e8).toFixed(1) + ' d';
  if (us >= 36e8) return (us / 36e8).toFixed(1) + ' h';
  if (us >= 6e7) return (us / 6e7).toFixed(1) + ' min';
  if (us >= 1e6) return (us / 1e6).toFixed(2) + ' s';
  if (us >= 1e3) return (us / 1e3).toFixed(2) + ' ms';
  return us.toFixed(0) + ' \u00b5s';
}

// A mark's shape, centred at (x, y): a bar, a chevron, a cross, a diamond, a square, a bracket.
function shape(c, k, x, y) {
  c.fillStyle = c.strokeStyle = KINDS[k].color;
  c.beginPath();
  if (k === 0) { c.fillRect(x - 1, y - 6, 2, 12); return; }
  if (k === 1) { c.moveTo(x - 6, y - 6); c.lineTo(x, y - 1); c.lineTo(x + 6, y - 6); c.lineTo(x + 6, y); c.lineTo(x, y + 6); c.lineTo(x - 6, y); c.closePath(); c.fill(); return; }
  if (k === 2) { c.lineWidth = 3; c.moveTo(x - 5, y - 5); c.lineTo(x + 5, y + 5); c.moveTo(x + 5, y - 5); c.lineTo(x - 5, y + 5); c.stroke(); c.lineWidth = 1; return; }
  if (k === 3) { c.moveTo(x, y - 6); c.lineTo(x + 6, y); c.lineTo(x, y + 6); c.lineTo(x - 6, y); c.closePath(); c.fill(); return; }
  if (k === 5) { c.fillRect(x - 1, y - 5, 2, 10); c.fillRect(x - 1, y - 1, 7, 2); return; }
  c.fillRect(x - 5, y - 5, 10, 10); c.fillStyle = '#fff'; c.fillRect(x - 2, y - 2, 4, 4);
}

var rows = [];
function buildRows() {
  rows = [{type: 'host', label: host.label + '  \u2014  ' + procs.length + ' processes, ' + N + ' records'}];
  if (!host.open) return;
  procs.forEach(function (p) {
    if (query && !(p.lists[0].length + p.lists[1].length)) return;
    rows.push({type: 'proc', proc: p, lists: p.lists});
    if (!p.open) return;
    p.tracks.forEach(function (t) {
      if (query && !(t.lists[0].length + t.lists[1].length)) return;
      rows.push({type: 'track', track: t, lists: t.lists});
    });
  });
}

var drawn, tickLabels = [], firstPaint = 0;
// The marks of list L on the row whose middle is ym: one per pixel; above them, the count of
// the marks a label spans (neighbouring pixels' counts summed so that labels never overlap).
function drawList(L, ym, k, color, counted) {
  var lo = lb(L, T(LABEL_W - 8), 0, L.length), hi = lb(L, T(W + 8), lo, L.length), labelEnd = -1, labelX = 0, labelN = 0;
  function label() {
    if (labelN < 2) return;
    ctx.fillStyle = '#444'; ctx.font = '9px sans-serif';
    ctx.fillText(labelN > 9999 ? Math.round(labelN / 1000) + 'k' : String(labelN), labelX + 3, ym - 3);
  }
  for (var i = lo; i < hi;) {
    var x = Math.floor(X(ts[L[i]])), j = Math.max(i + 1, lb(L, T(x + 1), i + 1, hi)), n = j - i;
    var mk = k;
    if (k) { mk = kind[L[i]]; for (var q = i + 1; q < j; q++) if (kind[L[q]] === 1 || (kind[L[q]] === 2 && mk !== 1)) mk = kind[L[q]]; }
    if (color) { ctx.fillStyle = color; ctx.fillRect(x - 0.5, ym - 6, 2, 12); } else shape(ctx, mk, x + 0.5, ym);
    // A collective call alone on its pixel, with a known completion: its span as a bar.
    if (!color && mk === 5 && n === 1 && dur[L[i]] > 0) ctx.fillRect(x, ym - 3, Math.max(1, X(ts[L[i]] + dur[L[i]]) - x), 6);
    if (counted) { drawn[KINDS[mk].key] = (drawn[KINDS[mk].key] || 0) + 1; drawn.records += n; }
    if (x > labelEnd) { label(); labelX = x; labelN = n; labelEnd = x + 34; } else labelN += n;
    i = j;
  }
  label();
}
function draw() {
  buildRows();
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, W, H);
  ctx.font = '11px sans-serif';
  ctx.textBaseline = 'alphabetic';
  var tk = ticks();
  tickLabels = tk.list.map(function (t) { return t.label; });
  drawn = {records: 0};
  var total = 0;
  rows.forEach(function (r) { r.h = ROW_H[r.type]; total += r.h; });
  scrollY = Math.max(0, Math.min(scrollY, total - (H - RULER_H)));
  var y = RULER_H - scrollY;
  ctx.save();
  ctx.beginPath(); ctx.rect(0, RULER_H, W, H - RULER_H); ctx.clip();
  rows.forEach(function (r) {
    r.y = y; y += r.h;
    if (r.y + r.h < RULER_H || r.y > H) return;
    var ym = r.y + r.h / 2 + 2;
    ctx.fillStyle = r.type === 'host' ? '#dde3ee' : r.type === 'proc' ? '#eef1f6' : '#fff';
    ctx.fillRect(0, r.y, W, r.h);
    ctx.fillStyle = '#e3e6ea'; ctx.fillRect(0, r.y + r.h - 1, W, 1);
    ctx.fillStyle = 'rgba(0,0,0,0.06)';
    tk.list.forEach(function (t) { var x = Math.round(X(t.t)); if (x >= LABEL_W) ctx.fillRect(x, r.y, 1, r.h); });
    var label, indent;
    if (r.type === 'host') { label = (host.open ? '\u25be ' : '\u25b8 ') + r.label; indent = 4; }
    else if (r.type === 'proc') { label = (r.proc.open ? '\u25be ' : '\u25b8 ') + r.proc.label; indent = 16; }
    else { label = r.track.name; indent = 40; }
    ctx.fillStyle = '#222';
    ctx.font = (r.type === 'track' ? '' : 'bold ') + '11px sans-serif';
    var room = LABEL_W - indent - (r.type === 'proc' && r.proc.worst ? 22 : 6);
    if (ctx.measureText(label).width > room) {
      while (label.length > 3 && ctx.measureText(label + '\u2026').width > room) label = label.slice(0, -1);
      label += '\u2026';
    }
    ctx.fillText(label, indent, r.y + r.h / 2 + 4);
    if (r.type === 'proc' && r.proc.worst) shape(ctx, r.proc.worst, LABEL_W - 12, r.y + r.h / 2);
    if (!r.lists) return;
    ctx.save();
    ctx.beginPath(); ctx.rect(LABEL_W, r.y, W - LABEL_W, r.h); ctx.clip();
    var counted = r.type === 'track' || (r.type === 'proc' && !r.proc.open);
    if (query) {
      drawList(r.proc ? r.proc.all[0] : r.track.all[0], ym, 0, FADED, false);
      drawList(r.lists[0], ym, 0, HIT, counted);
    } else {
      drawList(r.lists[0], ym, 0, null, counted);
    }
    drawList(r.lists[1], ym, 1, null, counted);
    if (selected >= 0 && ((r.track && tr[selected] === r.track.i) || (r.proc && tracks[tr[selected]].proc === r.proc))) {
      var sx = X(ts[selected]);
      ctx.strokeStyle = '#ff6d00'; ctx.lineWidth = 2; ctx.strokeRect(sx - 8, r.y + 1, 16, r.h - 3); ctx.lineWidth = 1;
    }
    ctx.restore();
  });
  ctx.restore();
  ctx.fillStyle = '#cfd4dc'; ctx.fillRect(LABEL_W - 1, RULER_H, 1, H - RULER_H);
  // The ruler (each tick's faint line down is drawn with the rows, under their marks).
  ctx.fillStyle = '#f6f7f9'; ctx.fillRect(0, 0, W, RULER_H);
  ctx.fillStyle = '#999'; ctx.fillRect(0, RULER_H - 1, W, 1);
  ctx.font = '11px sans-serif';
  ctx.fillStyle = '#222';
  ctx.fillText(parts(v0).d + (D.tz ? '  UTC' + (D.tz < 0 ? '-' : '+') + pad2(Math.floor(Math.abs(D.tz) / 3600)) + ':' + pad2(Math.abs(D.tz) / 60 % 60) : '  UTC'), 6, 16);
  ctx.fillStyle = '#666';
  ctx.fillText('view ' + human(v1 - v0), 160, 16);
  tk.list.forEach(function (t) {
    var x = Math.round(X(t.t));
    if (x < LABEL_W) return;
    ctx.fillStyle = '#888'; ctx.fillRect(x, RULER_H - 7, 1, 7);
    ctx.fillStyle = '#222'; ctx.fillText(t.label, x + 3, 14);
  });
  drawOverview();
  if (!firstPaint) firstPaint = performance.now();
  publish(total);
}

var bins = null;
function drawOverview() {
  var w = W, h = 40;
  octx.setTransform(dpr, 0, 0, dpr, 0, 0);
  octx.clearRect(0, 0, w, h);
  var a = full[0], b = full[1], x0 = LABEL_W, pw = w - LABEL_W;
  function ox(t) { return x0 + (t - a) / (b - a) * pw; }
  if (!bins || bins.length !== pw) {
    bins = new Float64Array(Math.max(1, pw));
    for (var i = 0; i < N; i++) bins[Math.min(pw - 1, Math.max(0, Math.floor((ts[i] - a) / (b - a) * pw)))]++;
  }
  var max = 1;
  for (var j = 0; j < bins.length; j++) max = Math.max(max, bins[j]);
  octx.fillStyle = '#9fb3d9';
  for (j = 0; j < bins.length; j++) if (bins[j]) { var bh = Math.max(1, Math.log(1 + bins[j]) / Math.log(1 + max) * (h - 14)); octx.fillRect(x0 + j, h - bh, 1, bh); }
  procs.forEach(function (p) { var L = p.all[1]; for (var k = 0; k < L.length; k++) shape(octx, kind[L[k]], ox(ts[L[k]]), 8); });
  octx.fillStyle = 'rgba(51,103,214,0.15)';
  octx.strokeStyle = '#3367d6';
  var l = ox(v0), r = ox(v1);
  octx.fillRect(l, 0, Math.max(2, r - l), h); octx.strokeRect(l + 0.5, 0.5, Math.max(2, r - l) - 1, h - 1);
  octx.fillStyle = '#222'; octx.font = '11px sans-serif';
  octx.fillText('overview: ' + human(tMax - tMin), 6, 16);
}

function publish(total) {
  var b = document.body.dataset;
  b.hosts = 1;
  b.groups = procs.length;
  b.labels = procs.map(function (p) { return p.label; }).join('|');
  b.tracks = tracks.length;
  b.rows = rows.length;
  b.records = N;
  b.ticks = tickLabels.join('|');
  b.hits = hits;
  b.drawn = JSON.stringify(drawn);
  b.view = v0 + ',' + v1;
  b.firstPaintMs = Math.round(firstPaint);
  document.getElementById('info').textContent = procs.length + ' processes, ' + tracks.length + ' tracks, ' + N + ' records' +
      (D.duplicates ? ' (' + D.duplicates + ' kept twice, shown once)' : '');
  document.getElementById('hits').textContent = query ? hits + ' of ' + N + ' records match' : '';
}

function resize() {
  var m = document.getElementById('main');
  W = Math.max(LABEL_W + 100, m.clientWidth); H = Math.max(60, m.clientHeight);
  chart.width = W * dpr; chart.height = H * dpr; chart.style.width = W + 'px'; chart.style.height = H + 'px';
  over.width = W * dpr; over.height = 40 * dpr;
  bins = null;
  draw();
}

function zoom(f, at) {
  if (at === undefined || at < LABEL_W) at = (LABEL_W + W) / 2;
  var t = T(at), span = Math.max(2, (v1 - v0) * f);
  v0 = t - (t - v0) / (v1 - v0) * span; v1 = v0 + span;
  draw();
}
function pan(f) { var d = (v1 - v0) * f; v0 += d; v1 += d; draw(); }
window.addEventListener('keydown', function (ev) {
  if (ev.target && ev.target.id === 'search') return;
  var k = ev.key.toLowerCase();
  if (k === 'w') zoom(0.8, mouseX); else if (k === 's') zoom(1.25, mouseX);
  else if (k === 'a') pan(-0.15); else if (k === 'd') pan(0.15);
  else if (k === '0') { v0 = full[0]; v1 = full[1]; draw(); }
  else return;
  ev.preventDefault();
});
chart.addEventListener('wheel', function (ev) {
  ev.preventDefault();
  if (ev.ctrlKey) zoom(ev.deltaY < 0 ? 0.8 : 1.25, ev.offsetX);
  else if (ev.shiftKey) pan(ev.deltaY > 0 ? 0.1 : -0.1);
  else { scrollY += ev.deltaY; draw(); }
}, {passive: false});

function rowAt(y) { for (var i = 0; i < rows.length; i++) if (y >= rows[i].y && y < rows[i].y + rows[i].h) return rows[i]; return null; }
// The event drawn nearest x on row r (within 6 px; another mark before a record), or -1.
function pick(r, x) {
  if (!r || !r.lists) return -1;
  var best = -1, bestD = 7;
  [r.lists[1], r.lists[0]].forEach(function (L, pass) {
    if (pass === 1 && best >= 0) return;
    for (var i = lb(L, T(x - 6), 0, L.length); i < L.length; i++) {
      var d = Math.abs(X(ts[L[i]]) - x);
      if (X(ts[L[i]]) > x + 6) break;
      if (d < bestD) { bestD = d; best = L[i]; }
    }
  });
  return best;
}
function show(e, r) {
  selected = e;
  var t = tracks[tr[e]], L = r && r.lists ? r.lists[kind[e] ? 1 : 0] : t.lists[0];
  var px = Math.floor(X(ts[e])), lo = lb(L, T(px), 0, L.length), hi = lb(L, T(px + 1), lo, L.length);
  var text = stamp(ts[e]) + '  ' + t.proc.label + ' \u25b8 ' + t.name + '  [' + KINDS[kind[e]].key + ']\n' + S[tx[e]];
  if (hi - lo > 1) {
    text += '\n\n' + (hi - lo) + ' marks share this pixel (zoom in with W to part them); the first ' + Math.min(20, hi - lo) + ':';
    for (var i = lo; i < Math.min(hi, lo + 20); i++) text += '\n' + stamp(ts[L[i]]) + '  ' + tracks[tr[L[i]]].name + '  ' + S[tx[L[i]]].slice(0, 300);
  }
  detail.textContent = text;
  document.body.dataset.selected = KINDS[kind[e]].key;
  draw();
}
var dragFrom = null;
chart.addEventListener('mousedown', function (ev) { dragFrom = {x: ev.offsetX, y: ev.offsetY, v0: v0, v1: v1, moved: false}; chart.focus(); });
chart.addEventListener('mousemove', function (ev) {
  mouseX = ev.offsetX;
  if (!dragFrom) return;
  var dx = ev.offsetX - dragFrom.x;
  if (Math.abs(dx) > 3) dragFrom.moved = true;
  if (!dragFrom.moved) return;
  var d = dx / (W - LABEL_W) * (dragFrom.v1 - dragFrom.v0);
  v0 = dragFrom.v0 - d; v1 = dragFrom.v1 - d;
  draw();
});
chart.addEventListener('mouseleave', function () { mouseX = -1; });
chart.addEventListener('mouseup', function (ev) {
  var from = dragFrom;
  dragFrom = null;
  if (!from || from.moved) return;
  var r = rowAt(ev.offsetY);
  if (!r || ev.offsetY < RULER_H) return;
  if (ev.offsetX < LABEL_W) {
    if (r.type === 'host') host.open = !host.open;
    else if (r.type === 'proc') r.proc.open = !r.proc.open;
    draw();
    return;
  }
  var e = pick(r, ev.offsetX);
  if (e >= 0) show(e, r);
});
function overviewGo(ev) {
  if (ev.offsetX < LABEL_W) return;
  var t = full[0] + (ev.offsetX - LABEL_W) / (W - LABEL_W) * (full[1] - full[0]), span = v1 - v0;
  v0 = t - span / 2; v1 = t + span / 2;
  draw();
}
over.addEventListener('mousedown', function (ev) { overviewGo(ev); over.onmousemove = function (e) { if (e.buttons) overviewGo(e); }; });

var search = document.getElementById('search'), lower = null;
function runSearch() {
  query = search.value.toLowerCase();
  hits = 0;
  if (!query) { hits = 0; tracks.forEach(function (t) { t.lists = t.all; }); procs.forEach(function (p) { p.lists = p.all; }); draw(); return; }
  if (!lower) lower = S.map(function (s) { return s.toLowerCase(); });
  var strHit = new Uint8Array(S.length), trackHit = new Uint8Array(tracks.length), i;
  for (i = 0; i < S.length; i++) strHit[i] = lower[i].indexOf(query) >= 0 ? 1 : 0;
  tracks.forEach(function (t) { trackHit[t.i] = t.name.toLowerCase().indexOf(query) >= 0 || t.proc.label.toLowerCase().indexOf(query) >= 0 ? 1 : 0; });
  hitOf = function (e) { return strHit[tx[e]] || trackHit[tr[e]]; };
  for (i = 0; i < N; i++) if (hitOf(i)) hits++;
  lists(hitOf);
  draw();
}
search.addEventListener('input', runSearch);
search.addEventListener('keydown', function (ev) {
  if (ev.key !== 'Enter' || !query || !hits) return;
  var from = selected >= 0 ? selected + 1 : 0, e = -1;
  for (var n = 0; n < N && e < 0; n++) { var i = (from + n) % N; if (hitOf(i)) e = i; }
  var span = v1 - v0;
  v0 = ts[e] - span / 2; v1 = ts[e] + span / 2;
  tracks[tr[e]].proc.open = host.open = true;
  show(e, null);
});

// The legend: each mark as the chart draws it.
var legend = document.getElementById('legend');
KINDS.concat([{key: 'hit', name: 'search hit', color: HIT}]).forEach(function (k, i) {
  var span = document.createElement('span'), c = document.createElement('canvas');
  c.width = 16; c.height = 16;
  var g = c.getContext('2d');
  if (i < KINDS.length) shape(g, i, 8, 8); else { g.fillStyle = HIT; g.fillRect(7, 2, 2, 12); }
  span.dataset.kind = k.key;
  span.appendChild(c);
  span.appendChild(document.createTextNode(k.name));
  legend.appendChild(span);
});

// For scripts and tests: where the first event whose text holds `text` is drawn (the pixel its
// mark is centred on, in the chart's coordinates; its process opened and scrolled to), or null.
window.timeline = {
  locate: function (text) {
    for (var i = 0; i < N; i++) {
      if (S[tx[i]].indexOf(text) < 0) continue;
      var t = tracks[tr[i]];
      host.open = t.proc.open = true;
      draw();
      for (var r = 0; r < rows.length; r++) {
        if (rows[r].track !== t) continue;
        scrollY += rows[r].y - RULER_H - 10;
        draw();
        return {x: Math.floor(X(ts[i])), y: rows[r].y + rows[r].h / 2 + 2, kind: KINDS[kind[i]].key};
      }
    }
    return null;
  }
};
window.addEventListener('resize', resize);
resize();
})();

#include "timeline_html.h"

namespace atracectl {
namespace {

// The page around the data. The script marks the body with data-marks (the records drawn)
// once it has drawn, which is what the test in headless Chromium reads.
constexpr const char* kHead = R"html(<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>atraced timeline</title>
<style>
body{font:13px monospace;margin:8px;background:#fff;color:#222}
#chart{border:1px solid #bbb;cursor:grab;user-select:none}
#detail{white-space:pre-wrap;border:1px solid #ddd;padding:6px;min-height:3em;max-height:12em;overflow:auto}
.label{fill:#333}.row{fill:#f4f4f4}.mark{fill:#c0392b;stroke:#7b241c}.mark:hover{fill:#2471a3}
</style></head><body>
<div id="info"></div>
<svg id="chart" width="1100" height="200"></svg>
<div>hover a mark for its record, click to keep it below; wheel to zoom, drag to pan, double-click for all</div>
<pre id="detail"></pre>
<script type="application/json" id="data">)html";

constexpr const char* kTail = R"html(</script>
<script>
(function () {
  var doc = JSON.parse(document.getElementById('data').textContent);
  var procs = {}, threads = {}, marks = [];
  doc.traceEvents.forEach(function (e) {
    if (e.ph === 'M' && e.name === 'process_name') procs[e.pid] = e.args.name;
    else if (e.ph === 'M' && e.name === 'thread_name') threads[e.pid + '/' + e.tid] = e.args.name;
    else if (e.ph === 'i') marks.push(e);
  });
  var keys = [];
  marks.forEach(function (m) { var k = m.pid + '/' + m.tid; if (keys.indexOf(k) < 0) keys.push(k); });
  keys.sort();
  var svg = document.getElementById('chart'), NS = 'http://www.w3.org/2000/svg';
  var left = 330, width = 1100, rowH = 22, top = 20;
  svg.setAttribute('height', top + rowH * Math.max(keys.length, 1) + 10);
  var t0 = Infinity, t1 = -Infinity;
  marks.forEach(function (m) { t0 = Math.min(t0, m.ts); t1 = Math.max(t1, m.ts); });
  if (!marks.length) { t0 = 0; t1 = 1; }
  if (t1 === t0) t1 = t0 + 1;
  var view = [t0, t1];
  function el(name, attrs, text) {
    var n = document.createElementNS(NS, name);
    for (var a in attrs) n.setAttribute(a, attrs[a]);
    if (text !== undefined) n.textContent = text;
    return n;
  }
  function x(ts) { return left + (ts - view[0]) / (view[1] - view[0]) * (width - left - 10); }
  function stamp(ts) { return new Date(ts / 1000).toISOString().replace('T', ' ').replace('Z', '') + String(ts % 1000).padStart(3, '0'); }
  function draw() {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    keys.forEach(function (k, i) {
      var y = top + i * rowH, pid = k.split('/')[0];
      svg.appendChild(el('rect', {class: 'row', x: 0, y: y, width: width, height: rowH - 2}));
      var label = (procs[pid] || ('pid ' + pid)) + ' / ' + (threads[k] || k);
      svg.appendChild(el('text', {class: 'label', x: 4, y: y + 15}, label.length > 42 ? label.slice(0, 41) + '~' : label));
    });
    svg.appendChild(el('text', {class: 'label', x: left, y: 14}, stamp(view[0])));
    svg.appendChild(el('text', {class: 'label', x: width - 230, y: 14}, stamp(view[1])));
    var drawn = 0;
    marks.forEach(function (m) {
      if (m.ts < view[0] || m.ts > view[1]) return;
      var c = el('circle', {class: 'mark', cx: x(m.ts), cy: top + keys.indexOf(m.pid + '/' + m.tid) * rowH + 10, r: 5});
      c.appendChild(el('title', {}, stamp(m.ts) + ' ' + m.args.text));
      c.addEventListener('click', function () { document.getElementById('detail').textContent = stamp(m.ts) + '\n' + m.args.text; });
      svg.appendChild(c);
      ++drawn;
    });
    document.body.setAttribute('data-marks', drawn);
    document.getElementById('info').textContent = marks.length + ' records on ' + keys.length + ' tracks; ' + drawn + ' in view';
  }
  svg.addEventListener('wheel', function (ev) {
    ev.preventDefault();
    var at = view[0] + (ev.offsetX - left) / (width - left - 10) * (view[1] - view[0]);
    var f = ev.deltaY < 0 ? 0.8 : 1.25;
    view = [at - (at - view[0]) * f, at + (view[1] - at) * f];
    draw();
  });
  var dragFrom = null;
  svg.addEventListener('mousedown', function (ev) { dragFrom = [ev.clientX, view[0], view[1]]; });
  window.addEventListener('mouseup', function () { dragFrom = null; });
  window.addEventListener('mousemove', function (ev) {
    if (!dragFrom) return;
    var d = (ev.clientX - dragFrom[0]) / (width - left - 10) * (dragFrom[2] - dragFrom[1]);
    view = [dragFrom[1] - d, dragFrom[2] - d];
    draw();
  });
  svg.addEventListener('dblclick', function () { view = [t0, t1]; draw(); });
  draw();
})();
</script></body></html>
)html";

}  // namespace

std::string_view TimelineHtmlHead() { return kHead; }
std::string_view TimelineHtmlTail() { return kTail; }

}  // namespace atracectl

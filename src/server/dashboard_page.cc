#include "server/dashboard_page.h"

namespace ds::server {

// The page leads with the one figure the cache exists for, the share of prompt tokens it
// served; hit rates are left out, since a restart's first request reads as a miss by every
// tier while all its tokens come from disk.
const char* DashboardHtml() {
  return R"html(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>deltaserve</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0 24px 24px; color: #222; background: #fafafa; }
  h1 { font-size: 18px; margin: 16px 0 8px; }
  h2 { font-size: 14px; margin: 0 0 8px; font-weight: 600; }
  .panel { background: white; border: 1px solid #ddd; border-radius: 6px; padding: 12px 16px;
           margin-top: 12px; }
  #headline .windows { display: flex; gap: 48px; flex-wrap: wrap; align-items: flex-end; }
  #headline .window { min-width: 320px; }
  .share { font-weight: 650; line-height: 1.1; }
  #share-recent { font-size: 56px; }
  #share-total { font-size: 36px; color: #444; }
  .caption { color: #555; font-size: 13px; }
  .split-bar { display: flex; height: 10px; width: 320px; background: #e0e0e0; border-radius: 3px;
               overflow: hidden; margin: 6px 0 4px; }
  .split-bar span { display: block; height: 100%; }
  .split { font-size: 13px; }
  .swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin: 0 4px 0 10px;
            vertical-align: -1px; }
  .split .swatch:first-child, .legend .swatch:first-child { margin-left: 0; }
  .memory { background: #2e7d32; } .disk { background: #1565c0; } .computed { background: #bdbdbd; }
  .queue_ms { background: #9e9e9e; } .restore_ms { background: #00897b; } .prefill_ms { background: #ef6c00; }
  #requests-line { margin-top: 10px; color: #444; }
  .legend { font-size: 12px; margin: 0 0 4px; }
  .charts { display: flex; gap: 12px; flex-wrap: wrap; }
  svg text { font-size: 11px; fill: #444; }
  table { border-collapse: collapse; background: white; font-size: 12px; }
  th, td { border: 1px solid #ddd; padding: 3px 6px; text-align: right; white-space: nowrap; }
  th { background: #f0f0f0; white-space: normal; vertical-align: bottom; }
  .scroll { overflow-x: auto; }
  td.text { text-align: left; }
  td.reason { max-width: 220px; overflow: hidden; text-overflow: ellipsis; }
  td.detail { white-space: normal; min-width: 120px; }
  .HIT, .ok { color: #1a7f37; font-weight: 600; }
  .MISS, .rejected, .error { color: #c62828; font-weight: 600; }
  .busy, .cancelled { color: #b26a00; font-weight: 600; }
  #key-form { display: none; margin: 12px 0; padding: 10px; background: #fff3cd; border: 1px solid #e0c36a; }
  #status { color: #666; font-size: 12px; font-weight: normal; }
</style>
</head>
<body>
<h1>deltaserve <span id="status">connecting</span></h1>
<form id="key-form">
  This server needs its API key to show its statistics:
  <input id="key" type="password" autocomplete="off"> <button id="key-save" type="submit">Show</button>
</form>

<section id="headline" class="panel">
  <h2>Prompt tokens served from the cache</h2>
  <div class="windows">
    <div class="window">
      <div class="share" id="share-recent">-</div>
      <div class="caption">last <span id="recent-n">0</span> requests,
        <span id="tokens-recent">no prompt tokens yet</span></div>
      <div class="split-bar" id="bar-recent"></div>
      <div class="split" id="split-recent"></div>
    </div>
    <div class="window">
      <div class="share" id="share-total">-</div>
      <div class="caption">since start, <span id="tokens-total">no prompt tokens yet</span></div>
      <div class="split-bar" id="bar-total"></div>
      <div class="split" id="split-total"></div>
    </div>
  </div>
  <div id="requests-line">requests since start: <b id="requests-total">0</b>
    <span id="outcomes-line">(<span id="outcomes"></span>)</span></div>
</section>

<section class="panel">
  <h2>Time to first token per request, oldest to newest</h2>
  <div class="legend" id="legend-ttft"><span class="swatch queue_ms"></span>queue<span
    class="swatch restore_ms"></span>restore from cache<span
    class="swatch prefill_ms"></span>prefill (computed tokens)</div>
  <svg id="chart-ttft" width="960" height="240"></svg>
</section>

<section class="panel">
  <h2>Newest requests (last <span class="recent-n">0</span>)</h2>
  <div class="scroll"><table>
    <thead><tr><th>time</th><th class="text">request</th><th>status</th><th class="text">reason</th>
    <th>conversation</th><th>prompt</th><th>cached memory</th><th>cached disk</th><th>computed</th>
    <th>restore ms</th><th>prefill ms</th><th>TTFT ms</th><th>decode tokens</th><th>decode tok/s</th>
    <th>cache</th><th class="text">cache detail</th></tr></thead>
    <tbody id="requests"></tbody>
  </table></div>
</section>

<section class="charts">
  <div class="panel"><h2>Decode rate against prompt length</h2>
    <svg id="chart-decode" width="470" height="220"></svg></div>
  <div class="panel"><h2>Cache occupancy per tier</h2>
    <div class="legend" id="legend-occupancy"><span class="swatch memory"></span>memory
      <span id="occupancy-memory"></span><span class="swatch disk"></span>disk
      <span id="occupancy-disk"></span></div>
    <svg id="chart-occupancy" width="470" height="200"></svg></div>
</section>

<script>
'use strict';
const NS = 'http://www.w3.org/2000/svg';
const COLORS = { queue_ms: '#9e9e9e', restore_ms: '#00897b', prefill_ms: '#ef6c00',
  memory: '#2e7d32', disk: '#1565c0' };
let apiKey = localStorage.getItem('deltaserve-api-key') || '';

const pct = (x) => (x === null || x === undefined ? '-' : (100 * x).toFixed(1) + '%');
const num = (x, digits = 0) => (x === null || x === undefined ? '-' : Number(x).toFixed(digits));
const count = (x) => Number(x).toLocaleString('en-US');

function el(name, attrs, parent, text) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  parent.appendChild(node);
  return node;
}

// Round ticks from 0: steps of 1, 2 or 5 times a power of ten, about `wanted` of them, the
// last at or above `max`.
function niceTicks(max, wanted = 4) {
  if (!(max > 0)) max = 1;
  const raw = max / wanted;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw * (1 - 1e-9));
  const n = Math.ceil(max / step - 1e-9) || 1;
  const digits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const label = (v) => (v === 0 ? '0' : step >= 1000 ? `${Math.round(v / 1000)}k` : v.toFixed(digits));
  return Array.from({ length: n + 1 }, (_, i) => ({ value: i * step, label: label(i * step) }));
}

// Clears `svg` and draws its axes with round ticks; the unit sits apart from the tick labels,
// turned along the y axis. Returns the scales and the plot area.
function axes(svg, { xMax, yMax, xLabel, yUnit, xTicks = true }) {
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const w = Number(svg.getAttribute('width')), h = Number(svg.getAttribute('height'));
  // Room on the right for the last x tick's label, on the left for the y labels and the unit.
  const box = { left: 64, right: w - 24, top: 10, bottom: h - 34 };
  const ys = niceTicks(yMax), xs = xTicks ? niceTicks(xMax, 5) : [];
  const yTop = ys[ys.length - 1].value, xTop = xTicks ? xs[xs.length - 1].value : xMax;
  const sx = (x) => box.left + (xTop > 0 ? x / xTop : 0) * (box.right - box.left);
  const sy = (y) => box.bottom - (y / yTop) * (box.bottom - box.top);
  for (const t of ys) {
    el('line', { x1: box.left, x2: box.right, y1: sy(t.value), y2: sy(t.value),
      stroke: t.value ? '#eee' : '#333' }, svg);
    el('text', { x: box.left - 6, y: sy(t.value) + 4, 'text-anchor': 'end', class: 'tick-y' }, svg, t.label);
  }
  for (const t of xs) {
    el('text', { x: sx(t.value), y: box.bottom + 14, 'text-anchor': 'middle', class: 'tick-x' },
      svg, t.label);
  }
  el('line', { x1: box.left, y1: box.top, x2: box.left, y2: box.bottom, stroke: '#333' }, svg);
  el('text', { x: (box.left + box.right) / 2, y: h - 4, 'text-anchor': 'middle', class: 'x-label' },
    svg, xLabel);
  const middle = (box.top + box.bottom) / 2;
  el('text', { x: 14, y: middle, 'text-anchor': 'middle', transform: `rotate(-90 14 ${middle})`,
    class: 'y-unit' }, svg, yUnit);
  return { sx, sy, box };
}

function emptyNote(svg, text) {
  el('text', { x: Number(svg.getAttribute('width')) / 2, y: Number(svg.getAttribute('height')) / 2,
    'text-anchor': 'middle', class: 'empty' }, svg, text);
}

function drawTtft(requests) {
  const svg = document.getElementById('chart-ttft');
  // As wide as its panel: the bars of 60 requests need the room.
  svg.setAttribute('width', Math.max(480, svg.parentNode.clientWidth - 32));
  const rows = requests.filter((r) => r.ran).slice(0, 60).reverse();
  const parts = ['queue_ms', 'restore_ms', 'prefill_ms'];
  const total = (r) => parts.reduce((s, p) => s + r[p], 0);
  const f = axes(svg, { xMax: rows.length, yMax: Math.max(...rows.map(total), 0), xTicks: false,
    xLabel: rows.length ? `${rows.length} requests the engine ran` : '', yUnit: 'TTFT, ms' });
  if (rows.length === 0) return emptyNote(svg, 'no requests yet');
  const slot = (f.box.right - f.box.left) / rows.length;
  const width = Math.max(1, Math.min(40, slot * 0.8));
  rows.forEach((r, i) => {
    const x = f.box.left + slot * i + (slot - width) / 2;
    let base = 0;
    for (const part of parts) {
      const y0 = f.sy(base), y1 = f.sy(base + r[part]);
      const rect = el('rect', { x, y: y1, width, height: Math.max(0, y0 - y1), fill: COLORS[part],
        class: part, 'data-id': r.id, 'data-value': r[part] }, svg);
      el('title', {}, rect, `${r.id}: queue ${num(r.queue_ms, 1)} ms, restore ${num(r.restore_ms, 1)} ms, ` +
        `prefill ${num(r.prefill_ms, 1)} ms (${r.computed_tokens} tokens computed)`);
      base += r[part];
    }
  });
}

function drawDecode(requests) {
  const svg = document.getElementById('chart-decode');
  const rows = requests.filter((r) => r.ran && r.decode_tokens > 1);
  const f = axes(svg, { xMax: Math.max(...rows.map((r) => r.prompt_tokens), 0),
    yMax: Math.max(...rows.map((r) => r.decode_tokens_per_s), 0), xLabel: 'prompt tokens', yUnit: 'tok/s' });
  if (rows.length === 0) return emptyNote(svg, 'no decodes yet');
  for (const r of rows) {
    el('circle', { cx: f.sx(r.prompt_tokens), cy: f.sy(r.decode_tokens_per_s), r: 3, fill: '#6a1b9a',
      'data-id': r.id, 'data-x': r.prompt_tokens, 'data-y': r.decode_tokens_per_s }, svg);
  }
}

function drawOccupancy(samples) {
  const svg = document.getElementById('chart-occupancy');
  if (samples.length === 0) return;
  const t0 = samples[0].unix_ms;
  const mib = (bytes) => bytes / 2 ** 20;
  const f = axes(svg, { xMax: (samples[samples.length - 1].unix_ms - t0) / 1000,
    yMax: Math.max(...samples.map((s) => mib(Math.max(s.memory_bytes, s.disk_bytes)))),
    xLabel: 'seconds', yUnit: 'MiB' });
  for (const [key, color] of [['memory_bytes', COLORS.memory], ['disk_bytes', COLORS.disk]]) {
    const points = samples.map((s) => `${f.sx((s.unix_ms - t0) / 1000)},${f.sy(mib(s[key]))}`).join(' ');
    el('polyline', { points, fill: 'none', stroke: color, 'stroke-width': 2, class: key }, svg);
  }
  const last = samples[samples.length - 1];
  document.getElementById('occupancy-memory').textContent =
    `${num(mib(last.memory_bytes), 1)} MiB, ${last.memory_snapshots} snapshots`;
  document.getElementById('occupancy-disk').textContent =
    `${num(mib(last.disk_bytes), 1)} MiB, ${last.disk_snapshots} snapshots`;
}

// The share of one window, with the memory / disk / computed split beneath it.
function drawShare(totals, which) {
  const cached = totals.cached_tokens.memory + totals.cached_tokens.disk;
  const whole = totals.prompt_tokens;
  document.getElementById(`share-${which}`).textContent = pct(totals.cached_share);
  document.getElementById(`tokens-${which}`).textContent = whole > 0
    ? `${count(cached)} of ${count(whole)} prompt tokens` : 'no prompt tokens yet';
  const bar = document.getElementById(`bar-${which}`);
  const split = document.getElementById(`split-${which}`);
  while (bar.firstChild) bar.removeChild(bar.firstChild);
  while (split.firstChild) split.removeChild(split.firstChild);
  if (whole === 0) return;
  const parts = [['memory', totals.cached_tokens.memory], ['disk', totals.cached_tokens.disk],
    ['computed', totals.computed_tokens]];
  for (const [name, tokens] of parts) {
    const span = document.createElement('span');
    span.className = name;
    span.style.width = `${(100 * tokens) / whole}%`;
    bar.appendChild(span);
    const swatch = document.createElement('span');
    swatch.className = `swatch ${name}`;
    split.appendChild(swatch);
    const text = document.createElement('span');
    text.id = `split-${which}-${name}`;
    text.textContent = `${name} ${pct(tokens / whole)}`;
    split.appendChild(text);
  }
}

function cell(tr, value, className) {
  const td = document.createElement('td');
  td.textContent = value;
  if (className) td.className = className;
  tr.appendChild(td);
  return td;
}

function drawTable(requests) {
  const body = document.getElementById('requests');
  while (body.firstChild) body.removeChild(body.firstChild);
  for (const r of requests) {
    const tr = document.createElement('tr');
    if (r.id) tr.dataset.id = r.id;
    cell(tr, new Date(r.unix_ms).toLocaleTimeString());
    cell(tr, `${r.method || '-'} ${r.path || '-'}`, 'text');
    cell(tr, r.status, r.outcome);
    const reason = cell(tr, r.reason ? `${r.outcome}: ${r.reason}` : r.outcome, 'text reason');
    reason.title = reason.textContent;
    if (!r.ran) {
      for (let i = 0; i < 12; ++i) cell(tr, '');
    } else {
      const d = r.divergence;
      const detail = r.cache === 'MISS' || d
        ? r.cache_limit + (d ? ` at token ${d.token}, message ${d.message} (${d.role})` : '')
        : r.tier;
      cell(tr, r.conversation);
      for (const v of [r.prompt_tokens, r.cached_tokens.memory, r.cached_tokens.disk, r.computed_tokens,
        num(r.restore_ms, 1), num(r.prefill_ms, 1), num(r.ttft_ms, 1), r.decode_tokens,
        num(r.decode_tokens_per_s, 1)]) cell(tr, v);
      cell(tr, r.cache, r.cache);
      cell(tr, detail, 'text detail');
    }
    body.appendChild(tr);
  }
}

function render(stats) {
  for (const node of document.querySelectorAll('#recent-n, .recent-n')) node.textContent = stats.recent_n;
  drawShare(stats.recent, 'recent');
  drawShare(stats.since_start, 'total');
  const total = stats.since_start;
  document.getElementById('requests-total').textContent = total.requests;
  const outcomes = Object.entries(total.outcomes)
    .filter(([, n]) => n > 0).map(([outcome, n]) => `${n} ${outcome}`).join(', ');
  document.getElementById('outcomes').textContent = outcomes;
  document.getElementById('outcomes-line').hidden = outcomes === '';
  const newest = stats.requests.slice(0, stats.recent_n);
  drawTtft(newest);
  drawTable(newest);
  drawDecode(newest);
  drawOccupancy(stats.occupancy);
}

let timer = null;

async function poll() {
  try {
    const headers = apiKey ? { Authorization: `Bearer ${apiKey}` } : {};
    const response = await fetch('/v1/stats', { headers });
    if (response.status === 401) {
      // Polling waits for a key: each refusal is a request the server logs and counts.
      clearInterval(timer);
      document.getElementById('key-form').style.display = 'block';
      document.getElementById('status').textContent = apiKey ? 'wrong API key' : 'needs the API key';
      return;
    }
    render(await response.json());
    document.getElementById('status').textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    document.getElementById('status').textContent = `not reachable: ${error}`;
  }
}

document.getElementById('key-form').addEventListener('submit', (event) => {
  event.preventDefault();
  apiKey = document.getElementById('key').value;
  localStorage.setItem('deltaserve-api-key', apiKey);
  document.getElementById('key-form').style.display = 'none';
  start();
});

function start() {
  clearInterval(timer);
  timer = setInterval(poll, 2000);
  poll();
}
start();
</script>
</body>
</html>
)html";
}

}  // namespace ds::server

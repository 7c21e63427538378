#include "server/dashboard_page.h"

namespace ds::server {

const char* DashboardHtml() {
  return R"html(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>deltaserve</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0 24px 24px; color: #222; background: #fafafa; }
  h1 { font-size: 18px; margin: 16px 0 8px; }
  .cards { display: flex; gap: 12px; flex-wrap: wrap; }
  .card { background: white; border: 1px solid #ddd; border-radius: 6px; padding: 10px 16px; min-width: 170px; }
  .card .value { font-size: 28px; font-weight: 600; }
  .card .label { color: #666; font-size: 12px; }
  .charts { display: flex; gap: 12px; flex-wrap: wrap; margin-top: 12px; }
  .chart { background: white; border: 1px solid #ddd; border-radius: 6px; padding: 8px; }
  .chart h2 { font-size: 13px; margin: 0 0 4px; font-weight: 600; }
  table { border-collapse: collapse; margin-top: 12px; background: white; font-size: 12px; }
  th, td { border: 1px solid #ddd; padding: 3px 6px; text-align: right; white-space: nowrap; }
  th { background: #f0f0f0; }
  td.text { text-align: left; }
  .HIT { color: #1a7f37; font-weight: 600; }
  .MISS { color: #c62828; font-weight: 600; }
  #key-form { display: none; margin: 12px 0; padding: 10px; background: #fff3cd; border: 1px solid #e0c36a; }
  #status { color: #666; font-size: 12px; }
</style>
</head>
<body>
<h1>deltaserve <span id="status">connecting</span></h1>
<form id="key-form">
  This server needs its API key to show its statistics:
  <input id="key" type="password" autocomplete="off"> <button id="key-save" type="submit">Show</button>
</form>
<div class="cards">
  <div class="card"><div class="value" id="hit-rate-memory">-</div><div class="label">restore hit rate, memory (last <span class="recent-n">0</span>)</div></div>
  <div class="card"><div class="value" id="hit-rate-disk">-</div><div class="label">restore hit rate, disk (last <span class="recent-n">0</span>)</div></div>
  <div class="card"><div class="value" id="share-recent">-</div><div class="label">prompt tokens from cache (last <span class="recent-n">0</span>)</div></div>
  <div class="card"><div class="value" id="share-total">-</div><div class="label">prompt tokens from cache, since start</div></div>
  <div class="card"><div class="value" id="hit-rate-memory-total">-</div><div class="label">hit rate since start, memory</div></div>
  <div class="card"><div class="value" id="hit-rate-disk-total">-</div><div class="label">hit rate since start, disk</div></div>
  <div class="card"><div class="value" id="requests-total">-</div><div class="label">requests since start</div></div>
  <div class="card"><div class="value" id="cached-total">-</div><div class="label">prompt tokens cached / computed since start</div></div>
</div>
<div class="charts">
  <div class="chart"><h2>Time to first token per request: queue, restore, prefill</h2><svg id="chart-ttft" width="460" height="220"></svg></div>
  <div class="chart"><h2>Decode tok/s vs context length</h2><svg id="chart-decode" width="460" height="220"></svg></div>
  <div class="chart"><h2>Cache occupancy per tier</h2><svg id="chart-occupancy" width="460" height="220"></svg></div>
</div>
<table>
  <thead><tr><th>time</th><th class="text">request</th><th>status</th><th class="text">reason</th><th>conversation</th><th>prompt</th><th>cached memory</th><th>cached disk</th><th>computed</th>
  <th>restore ms</th><th>prefill ms</th><th>TTFT ms</th><th>decode tokens</th><th>decode tok/s</th><th>cache</th><th class="text">reason / divergence</th></tr></thead>
  <tbody id="requests"></tbody>
</table>
<script>
'use strict';
const NS = 'http://www.w3.org/2000/svg';
let apiKey = localStorage.getItem('deltaserve-api-key') || '';

const pct = (x) => (x === null || x === undefined ? '-' : (100 * x).toFixed(1) + '%');
const num = (x, digits = 0) => (x === null || x === undefined ? '-' : Number(x).toFixed(digits));

function el(name, attrs, parent) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  parent.appendChild(node);
  return node;
}

// Axes and scales for a chart of (x, y) values; returns the mapping functions.
function frame(svg, xMax, yMax, xLabel, yLabel) {
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const w = Number(svg.getAttribute('width')), h = Number(svg.getAttribute('height'));
  const left = 50, bottom = 30, top = 10, right = 10;
  const sx = (x) => left + (xMax > 0 ? x / xMax : 0) * (w - left - right);
  const sy = (y) => h - bottom - (yMax > 0 ? y / yMax : 0) * (h - top - bottom);
  el('line', { x1: left, y1: h - bottom, x2: w - right, y2: h - bottom, stroke: '#333' }, svg);
  el('line', { x1: left, y1: top, x2: left, y2: h - bottom, stroke: '#333' }, svg);
  for (let i = 0; i <= 4; ++i) {
    const y = (yMax * i) / 4;
    el('text', { x: left - 4, y: sy(y) + 4, 'text-anchor': 'end', 'font-size': 10 }, svg).textContent = num(y, yMax < 10 ? 1 : 0);
  }
  el('text', { x: (left + w) / 2, y: h - 4, 'text-anchor': 'middle', 'font-size': 10 }, svg).textContent = `${xLabel} (max ${num(xMax)})`;
  el('text', { x: 4, y: top + 8, 'font-size': 10 }, svg).textContent = yLabel;
  return { sx, sy, bottom: h - bottom };
}

function drawTtft(requests) {
  const svg = document.getElementById('chart-ttft');
  const rows = requests.filter((r) => r.ran).slice(0, 40).reverse();
  const total = (r) => r.queue_ms + r.restore_ms + r.prefill_ms;
  const yMax = Math.max(1, ...rows.map(total));
  const f = frame(svg, rows.length, yMax, 'request', 'ms');
  const colors = { queue_ms: '#9e9e9e', restore_ms: '#2e7d32', prefill_ms: '#ef6c00' };
  Object.entries(colors).forEach(([part, color], i) => {
    el('text', { x: 330, y: 20 + 13 * i, 'font-size': 10, fill: color }, svg).textContent = part.replace('_ms', '');
  });
  rows.forEach((r, i) => {
    let base = 0;
    for (const part of ['queue_ms', 'restore_ms', 'prefill_ms']) {
      const y0 = f.sy(base), y1 = f.sy(base + r[part]);
      el('rect', { x: f.sx(i) + 1, y: y1, width: Math.max(1, f.sx(1) - f.sx(0) - 2), height: Math.max(0, y0 - y1),
        fill: colors[part], class: part, 'data-id': r.id, 'data-value': r[part] }, svg);
      base += r[part];
    }
  });
}

function drawDecode(requests) {
  const svg = document.getElementById('chart-decode');
  const rows = requests.filter((r) => r.ran && r.decode_tokens > 1);
  const xMax = Math.max(1, ...rows.map((r) => r.prompt_tokens));
  const yMax = Math.max(1, ...rows.map((r) => r.decode_tokens_per_s));
  const f = frame(svg, xMax, yMax, 'prompt tokens', 'tok/s');
  for (const r of rows) {
    el('circle', { cx: f.sx(r.prompt_tokens), cy: f.sy(r.decode_tokens_per_s), r: 3, fill: '#6a1b9a',
      'data-id': r.id, 'data-x': r.prompt_tokens, 'data-y': r.decode_tokens_per_s }, svg);
  }
}

function drawOccupancy(samples) {
  const svg = document.getElementById('chart-occupancy');
  if (samples.length === 0) return;
  const t0 = samples[0].unix_ms;
  const xMax = Math.max(1, (samples[samples.length - 1].unix_ms - t0) / 1000);
  const yMax = Math.max(1, ...samples.map((s) => Math.max(s.memory_bytes, s.disk_bytes) / 2 ** 20));
  const f = frame(svg, xMax, yMax, 'seconds', 'MiB');
  for (const [key, color] of [['memory_bytes', '#1565c0'], ['disk_bytes', '#ef6c00']]) {
    const points = samples.map((s) => `${f.sx((s.unix_ms - t0) / 1000)},${f.sy(s[key] / 2 ** 20)}`).join(' ');
    el('polyline', { points, fill: 'none', stroke: color, 'stroke-width': 2, class: key }, svg);
  }
  const last = samples[samples.length - 1];
  el('text', { x: 60, y: 20, 'font-size': 10, fill: '#1565c0' }, svg).textContent =
    `memory ${num(last.memory_bytes / 2 ** 20, 1)} MiB, ${last.memory_snapshots} snapshots`;
  el('text', { x: 60, y: 34, 'font-size': 10, fill: '#ef6c00' }, svg).textContent =
    `disk ${num(last.disk_bytes / 2 ** 20, 1)} MiB, ${last.disk_snapshots} snapshots`;
}

function drawTable(requests) {
  const body = document.getElementById('requests');
  while (body.firstChild) body.removeChild(body.firstChild);
  for (const r of requests) {
    const tr = document.createElement('tr');
    if (r.id) tr.dataset.id = r.id;
    const head = [new Date(r.unix_ms).toLocaleTimeString(), `${r.method} ${r.path}`, r.status,
      r.reason || r.outcome];
    const reason = !r.ran ? '' : r.cache === 'MISS' || r.divergence
      ? r.cache_limit + (r.divergence ? ` at token ${r.divergence.token}, message ${r.divergence.message} (${r.divergence.role})` : '')
      : r.tier;
    const run = r.ran ? [r.conversation, r.prompt_tokens, r.cached_tokens.memory, r.cached_tokens.disk,
      r.computed_tokens, num(r.restore_ms, 1), num(r.prefill_ms, 1), num(r.ttft_ms, 1), r.decode_tokens,
      num(r.decode_tokens_per_s, 1), r.cache, reason] : Array(12).fill('');
    [...head, ...run].forEach((value, i) => {
      const td = document.createElement('td');
      td.textContent = value;
      if (i === 1 || i === 3 || i === 4 || i === 15) td.className = 'text';
      if (i === 14) td.className = value;
      tr.appendChild(td);
    });
    body.appendChild(tr);
  }
}

function render(stats) {
  const recent = stats.recent, total = stats.since_start;
  for (const node of document.querySelectorAll('.recent-n')) node.textContent = stats.recent_n;
  document.getElementById('hit-rate-memory').textContent = pct(recent.hit_rate.memory);
  document.getElementById('hit-rate-disk').textContent = pct(recent.hit_rate.disk);
  document.getElementById('share-recent').textContent = pct(recent.cached_share);
  document.getElementById('share-total').textContent = pct(total.cached_share);
  document.getElementById('hit-rate-memory-total').textContent = pct(total.hit_rate.memory);
  document.getElementById('hit-rate-disk-total').textContent = pct(total.hit_rate.disk);
  document.getElementById('requests-total').textContent = total.requests;
  document.getElementById('cached-total').textContent =
    `${total.cached_tokens.memory + total.cached_tokens.disk} / ${total.computed_tokens}`;
  drawTtft(stats.requests);
  drawDecode(stats.requests);
  drawOccupancy(stats.occupancy);
  drawTable(stats.requests);
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

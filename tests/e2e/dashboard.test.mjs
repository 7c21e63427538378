// The live dashboard at / in headless Chromium: after a few turns of an agent session it shows
// the same numbers as /metrics, asks once for the API key, loads nothing from the network, and
// leaves a screenshot in build/test-artifacts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { binary, startServer } from './server.mjs';

const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const browserPath = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const kKey = 'dashboard-test-key';
const work = mkdtempSync(path.join(tmpdir(), 'deltaserve-dashboard-'));
let server;

before(async () => {
  server = await startServer(['--api-key', kKey], { embedded: true });
});

after(async () => {
  assert.equal(await server.stop(), 0, server.log());
});

// Three turns of a coding-agent session in the ../shared/traces format.
function writeTrace() {
  const messages = [{ role: 'system', content: 'You are a coding agent. '.repeat(60) }];
  const lines = [];
  for (let turn = 1; turn <= 3; ++turn) {
    messages.push({ role: 'user', content: `Step ${turn}: read file ${turn}. ` + 'detail '.repeat(50) });
    lines.push(JSON.stringify({ turn, seq: turn, method: 'POST', path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      body: { model: 'recorded', messages: [...messages], stream: true, max_tokens: 8 } }));
    messages.push({ role: 'assistant', content: `Read file ${turn}.` });
  }
  const file = path.join(work, 'session.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

async function metrics() {
  const text = await (await fetch(`${server.baseUrl}/metrics`,
    { headers: { Authorization: `Bearer ${kKey}` } })).text();
  const sum = (pattern) => text.split('\n').filter((l) => pattern.test(l))
    .reduce((s, l) => s + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  return {
    requests: sum(/^deltaserve_http_requests_total\{/),
    ok: sum(/^deltaserve_http_requests_total\{outcome="ok",/),
    rejected: sum(/^deltaserve_http_requests_total\{outcome="rejected",/),
    offered: sum(/^deltaserve_prompt_tokens_offered_total /),
    computed: sum(/^deltaserve_prompt_tokens_computed_total /),
    reusedMemory: sum(/^deltaserve_prompt_tokens_reused_total\{tier="memory"\}/),
    reusedDisk: sum(/^deltaserve_prompt_tokens_reused_total\{tier="disk"\}/),
    lookups: sum(/^deltaserve_cache_restores_total\{/),
    hitsMemory: sum(/^deltaserve_cache_restores_total\{outcome="hit",.*tier="memory"\}/),
    hitsDisk: sum(/^deltaserve_cache_restores_total\{outcome="hit",.*tier="disk"\}/),
  };
}

const pct = (part, whole) => `${((100 * part) / whole).toFixed(1)}%`;

test('/v1/stats is behind the API key', async () => {
  assert.equal((await fetch(`${server.baseUrl}/v1/stats`)).status, 401);
  const ok = await fetch(`${server.baseUrl}/v1/stats`, { headers: { Authorization: `Bearer ${kKey}` } });
  assert.equal(ok.status, 200);
});

// The TTFT chart's geometry as the browser laid it out: its y tick values, and whether the
// legend covers a bar or the unit covers a tick label.
async function ttftChart(page) {
  return page.evaluate(() => {
    const box = (node) => node.getBoundingClientRect();
    const hit = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    const svg = document.getElementById('chart-ttft');
    const bars = [...svg.querySelectorAll('rect')].map(box);
    const ticks = [...svg.querySelectorAll('.tick-y')];
    const unit = box(svg.querySelector('.y-unit'));
    const legend = box(document.getElementById('legend-ttft'));
    return {
      ticks: ticks.map((t) => t.textContent),
      legendOnBars: bars.some((b) => hit(b, legend)),
      unitOnTicks: ticks.some((t) => hit(box(t), unit)),
    };
  });
}

// Tick labels such as 0, 10k, 20k: equal steps of 1, 2 or 5 times a power of ten.
function assertRoundTicks(labels) {
  const values = labels.map((t) => (t.endsWith('k') ? 1000 * Number(t.slice(0, -1)) : Number(t)));
  assert.ok(values.length >= 2, labels.join(','));
  const step = values[1] - values[0];
  values.forEach((v, i) => assert.ok(Math.abs(v - i * step) <= 1e-9 * step, labels.join(',')));
  const mantissa = step / 10 ** Math.floor(Math.log10(step) + 1e-9);
  assert.ok([1, 2, 5].some((m) => Math.abs(mantissa - m) < 1e-6), labels.join(','));
}

test('the dashboard shows the numbers /metrics reports',
  { skip: browserPath ? false : 'no Chromium at /usr/bin/chromium (scripts/install-deps.sh installs it)' },
  async () => {
    // A request the server refuses is shown and counted like the others.
    const bad = await fetch(`${server.baseUrl}/v1/chat/completions`, { method: 'POST',
      headers: { Authorization: `Bearer ${kKey}`, 'content-type': 'application/json' }, body: '{nope' });
    assert.equal(bad.status, 400);
    const out = path.join(work, 'replay');
    const replay = spawnSync(binary, ['bench', 'replay', writeTrace(), '--url', server.baseUrl,
      '--api-key', kKey, '-o', out], { encoding: 'utf8' });
    assert.equal(replay.status, 0, replay.stderr);
    const turns = JSON.parse(readFileSync(path.join(out, 'replay.json'), 'utf8')).rows;

    const browser = await chromium.launch({ executablePath: browserPath, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1500, height: 1000 } });
      const foreign = [];
      page.on('request', (request) => {
        if (!request.url().startsWith(server.baseUrl)) foreign.push(request.url());
      });
      await page.goto(`${server.baseUrl}/`);
      await page.waitForSelector('#key-form', { state: 'visible' });
      assert.equal((await page.textContent('#status')).trim(), 'needs the API key');
      // A wrong key says so, and asks again.
      await page.fill('#key', 'not-the-key');
      await page.click('#key-save');
      await page.waitForFunction(() => document.getElementById('status').textContent === 'wrong API key');
      await page.waitForSelector('#key-form', { state: 'visible' });
      await page.fill('#key', kKey);
      await page.click('#key-save');
      // The three turns and the 400; the 401s of /v1/stats before the key was right are rows too.
      await page.waitForFunction(() => [...document.querySelectorAll('#requests tr')]
        .filter((tr) => tr.children[1].textContent.startsWith('POST')).length === 4);

      const m = await metrics();
      const text = async (id) => (await page.textContent(`#${id}`)).trim();
      const reused = m.reusedMemory + m.reusedDisk;
      assert.equal(await text('requests-total'), String(m.requests));
      assert.equal(await text('outcomes'), `${m.ok} ok, ${m.rejected} rejected`);
      for (const window of ['recent', 'total']) {
        assert.equal(await text(`share-${window}`), pct(reused, m.offered));
        assert.equal(await text(`split-${window}-memory`), `memory ${pct(m.reusedMemory, m.offered)}`);
        assert.equal(await text(`split-${window}-disk`), `disk ${pct(m.reusedDisk, m.offered)}`);
        assert.equal(await text(`split-${window}-computed`), `computed ${pct(m.computed, m.offered)}`);
      }
      assert.match(await text('tokens-total'), new RegExp(`^${reused.toLocaleString('en-US')} of `));
      assert.ok(m.hitsMemory >= 2, 'the later turns hit');
      assert.equal(await page.locator('.card').count(), 0, 'the eight cards are gone');

      // Newest first; each turn as the replay measured it.
      const all = await page.$$eval('#requests tr', (trs) =>
        trs.map((tr) => [...tr.children].map((td) => td.textContent)));
      const rejected = all.filter((cells) => cells[2] === '400');
      assert.equal(rejected.length, 1);
      assert.equal(rejected[0][1], 'POST /v1/chat/completions');
      assert.match(rejected[0][3], /^rejected: the request body is not valid JSON/);
      const rows = all.filter((cells) => cells[1].startsWith('POST') && cells[2] === '200');
      const byTurn = [...turns].reverse();
      assert.equal(rows.length, 3);
      rows.forEach((cells, i) => {
        assert.equal(cells[1], 'POST /v1/chat/completions');
        assert.equal(cells[3], 'ok');
        assert.equal(Number(cells[5]), byTurn[i].prompt_tokens, `row ${i} prompt`);
        assert.equal(Number(cells[6]) + Number(cells[7]), byTurn[i].cached_tokens, `row ${i} cached`);
        assert.equal(Number(cells[8]), byTurn[i].computed_tokens, `row ${i} computed`);
        assert.equal(cells[14], byTurn[i].cached_tokens > 0 ? 'HIT' : 'MISS');
      });
      assert.equal(rows[2][15], 'nothing_cached', 'the first turn says why it missed');
      assert.equal(new Set(rows.map((cells) => cells[4])).size, 1, 'one conversation');

      assert.equal(await page.locator('#chart-ttft rect.prefill_ms').count(), 3);
      const chart = await ttftChart(page);
      assertRoundTicks(chart.ticks);
      assert.equal(chart.legendOnBars, false, 'the legend covers no bar');
      assert.equal(chart.unitOnTicks, false, 'the unit covers no tick label');
      assert.equal(await page.locator('#chart-decode circle').count(),
        turns.filter((t) => t.decode_tokens > 1).length);
      assert.equal(await page.locator('#chart-occupancy polyline.memory_bytes').count(), 1);
      assert.deepEqual(foreign, [], 'the page loads nothing from elsewhere');

      const shot = path.join(repoRoot, 'build', 'test-artifacts', 'dashboard.png');
      mkdirSync(path.dirname(shot), { recursive: true });
      await page.screenshot({ path: shot, fullPage: true });
      assert.ok(statSync(shot).size > 10000);
    } finally {
      await browser.close();
    }
  });

test('round ticks', () => {
  for (const labels of [['0', '10k', '20k', '30k'], ['0', '0.5', '1.0'], ['0', '200', '400']]) {
    assertRoundTicks(labels);
  }
  assert.throws(() => assertRoundTicks(['0', '13958', '27916']));
});

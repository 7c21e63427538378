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

test('the dashboard shows the numbers /metrics reports',
  { skip: browserPath ? false : 'no Chromium at /usr/bin/chromium (scripts/install-deps.sh installs it)' },
  async () => {
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
      // The API requests; the 401s of /v1/stats before the key was given are rows too.
      await page.waitForFunction(() => [...document.querySelectorAll('#requests tr')]
        .filter((tr) => tr.children[1].textContent.startsWith('POST')).length === 3);

      const m = await metrics();
      const text = async (id) => (await page.textContent(`#${id}`)).trim();
      assert.equal(await text('requests-total'), String(m.requests));
      assert.equal(await text('share-total'), pct(m.reusedMemory + m.reusedDisk, m.offered));
      assert.equal(await text('share-recent'), pct(m.reusedMemory + m.reusedDisk, m.offered));
      assert.equal(await text('cached-total'), `${m.reusedMemory + m.reusedDisk} / ${m.computed}`);
      assert.equal(await text('hit-rate-memory-total'), pct(m.hitsMemory, m.lookups));
      assert.equal(await text('hit-rate-disk-total'), pct(m.hitsDisk, m.lookups));
      assert.equal(await text('hit-rate-memory'), pct(m.hitsMemory, m.lookups));
      assert.ok(m.hitsMemory >= 2, 'the later turns hit');

      // Newest first; each row as the replay measured it.
      const rows = (await page.$$eval('#requests tr', (trs) =>
        trs.map((tr) => [...tr.children].map((td) => td.textContent))))
        .filter((cells) => cells[1].startsWith('POST'));
      const byTurn = [...turns].reverse();
      rows.forEach((cells, i) => {
        assert.equal(cells[1], 'POST /v1/chat/completions');
        assert.equal(cells[2], '200');
        assert.equal(Number(cells[5]), byTurn[i].prompt_tokens, `row ${i} prompt`);
        assert.equal(Number(cells[6]) + Number(cells[7]), byTurn[i].cached_tokens, `row ${i} cached`);
        assert.equal(Number(cells[8]), byTurn[i].computed_tokens, `row ${i} computed`);
        assert.equal(cells[14], byTurn[i].cached_tokens > 0 ? 'HIT' : 'MISS');
      });
      assert.equal(rows[2][15], 'nothing_cached', 'the first turn says why it missed');
      assert.equal(new Set(rows.map((cells) => cells[4])).size, 1, 'one conversation');

      assert.equal(await page.locator('#chart-ttft rect.prefill_ms').count(), 3);
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

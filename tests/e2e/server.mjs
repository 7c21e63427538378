// Starts a deltaserve server on a free port for a test file and stops it afterwards.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
export const binary = process.env.DELTASERVE_BIN ?? path.join(repoRoot, 'build/src/apps/deltaserve');
const sharedDir = process.env.DS_SHARED_DIR ?? path.join(repoRoot, '../shared');
// A model with a real Qwen3.5 chat template when the shared test data is present; otherwise the
// default model embedded in the binary.
export const modelPath = [path.join(sharedDir, 'testdata/hybrid/qwen35moe-pub.gguf')]
  .find((p) => existsSync(p));

// `embedded`: serve the model inside the binary even when the shared one is present.
// The disk tier goes to a fresh directory unless the test names one or asks for none
// (`privateCacheDir: false`, when a cache config file names it). `prlimitFsize` runs the server
// under that file-size limit (bytes).
export async function startServer(extraArgs = [],
  { embedded = false, prlimitFsize = 0, privateCacheDir = true } = {}) {
  const args = ['serve', '--port', '0', '--threads', '2', ...extraArgs];
  const named = extraArgs.includes('--cache-dir');
  const cacheDir = named ? extraArgs[extraArgs.indexOf('--cache-dir') + 1]
    : privateCacheDir ? mkdtempSync(path.join(tmpdir(), 'deltaserve-cache-')) : null;
  if (!named && cacheDir) args.push('--cache-dir', cacheDir);
  if (modelPath && !embedded && !extraArgs.includes('-m')) args.push('-m', modelPath);
  const child = prlimitFsize > 0
    ? spawn('prlimit', [`--fsize=${prlimitFsize}`, binary, ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
    : spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${log}`)), 60000);
    child.stderr.on('data', (chunk) => {
      log += chunk;
      const match = /listening on http:\/\/[^:]+:(\d+)/.exec(log);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${log}`));
    });
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
  return {
    port,
    cacheDir,
    pid: child.pid,
    exited,
    baseUrl: `http://127.0.0.1:${port}`,
    log: () => log,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

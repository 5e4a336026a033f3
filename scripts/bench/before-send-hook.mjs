// A local before-send hook for the benchmark (docs/benchmarks.md "Before-send hook"): answers every call
// {"action":"allow"} at once, keeping connections alive, and counts the calls. It does not verify the
// signature (the tests do, tests/api/before_send_test.py): the figure is QIM's cost, not the hook's.
// usage: node scripts/bench/before-send-hook.mjs PORT      (prints "hook: N calls" on SIGTERM/SIGINT)
import { createServer } from 'node:http';

const port = Number(process.argv[2] || 0);
let calls = 0;
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    calls += 1;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"action":"allow"}');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => console.log(`hook: listening on ${server.address().port}`));
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    console.log(`hook: ${calls} calls`);
    process.exit(0);
  });
}

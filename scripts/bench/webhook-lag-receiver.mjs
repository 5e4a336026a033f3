// The event webhook's receiving end for scripts/bench/webhook-lag.sh: answers every POST 204 at once and
// records, per `message.created` event, its lag: the time it arrived here minus the event's `time` (the
// Outbox record's server time; both clocks are this machine's). GET /report answers the counts and the
// lag's percentiles as JSON. usage: node webhook-lag-receiver.mjs PORT
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 44250);
const lags = [];
const seen = new Set();
let events = 0;
let repeats = 0;

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/report') {
    const sorted = [...lags].sort((a, b) => a - b);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      events,
      messages: lags.length,
      repeats,
      lag_ms: { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99),
                max: sorted.at(-1) ?? null },
    }));
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const now = Date.now();
    res.writeHead(204);
    res.end();
    try {
      const e = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      ++events;
      if (e.type !== 'message.created') return;
      if (seen.has(e.id)) { ++repeats; return; }  // at least once: a repeat is counted, not measured again
      seen.add(e.id);
      lags.push(now - e.time);
    } catch {
      // not an event: ignored
    }
  });
}).listen(port, '127.0.0.1');

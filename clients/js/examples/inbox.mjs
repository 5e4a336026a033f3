import WebSocket from 'ws';
import { QimClient, unreadLabel } from '@qim/client';

const { QIM_URL = 'ws://127.0.0.1:7400/', QIM_TOKEN } = process.env;
const qim = new QimClient({ url: QIM_URL, token: QIM_TOKEN, WebSocket });
qim.on('read', (r) => console.log(`${r.conversation} read up to ${r.read_seq} (${r.origin})`)); // every device
qim.on('receipt', (r) => console.log(`${r.user} has read ${r.conversation} through ${r.read_through}`));
qim.on('typing', (t) => t.state === 'start' && console.log(`${t.user} is typing in ${t.conversation}`));
qim.on('presence', (p) => console.log(`${p.user} is ${p.status}`));
try {
  await qim.start();
  const page = await qim.conversations({ limit: 20 }); // newest first; the client keeps it current
  for (const c of page.conversations)
    console.log(`${c.peer ?? c.name}: ${unreadLabel(c) || 'no'} unread, last "${c.last?.body}"`);
  for (const c of page.conversations.filter((c) => c.unread > 0)) {
    const ok = await qim.markRead(c.conversation); // READ up to its last entry, for all my devices
    console.log(`marked ${ok.conversation} read: ${ok.unread} unread`);
  }
} catch (e) {
  console.error(`qim: ${e.message}`);
  process.exitCode = 1;
}
qim.close();

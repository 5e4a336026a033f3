import WebSocket from 'ws'; // Node 20; in a browser leave it out: the native WebSocket is used
import { QimClient } from '@qim/client';

const { QIM_URL = 'ws://127.0.0.1:7400/', QIM_TOKEN, QIM_TO = 'bob' } = process.env;
const qim = new QimClient({ url: QIM_URL, token: QIM_TOKEN, WebSocket });
qim.on('message', (m) => console.log(`${m.sender}: ${m.body}`)); // every mailbox entry, once, in order
try {
  await qim.start(); // AUTH, then SYNC from the cursor; rejects after 10 s if no server answers
  const ack = await qim.send({ to: QIM_TO, body: 'hello from the SDK' }); // retried on UNAVAILABLE
  console.log(`stored as ${ack.message_id} in ${ack.conversation}`);
} catch (e) {
  console.error(`qim: ${e.message}`); // QimConnectionError, QimAuthError (a refused token), QimError
  process.exitCode = 1;
}
qim.close();

import WebSocket from 'ws';
import { QimClient } from '@qim/client';

const { QIM_URL = 'ws://127.0.0.1:7400/', QIM_TOKEN, QIM_TO = 'bob' } = process.env;
const qim = new QimClient({ url: QIM_URL, token: QIM_TOKEN, WebSocket });
qim.on('revoked', (r) => console.error(`signed out: ${r.reason}`)); // this token is done: log in again
const recalled = new Promise((done) => qim.on('messageState', (m) => m.recalled && done(m)));
try {
  await qim.start();
  const { conversation, message_id } = await qim.send({ to: QIM_TO, body: 'helo' });
  const edit = await qim.edit(conversation, message_id, 'hello'); // every member's mailbox gets the change
  console.log(`edited ${edit.target}`);
  await qim.recall(conversation, message_id); // "unsend for everyone"
  console.log(`recalled: body "${(await recalled).body}"`); // my devices fold it too (messageState)
  await qim.edit(conversation, message_id, 'again').catch((e) => console.log(`no edit: ${e.code}`));
  await qim.mute(conversation); // no badge; its own unread count stays
  console.log(`deleted for me through ${(await qim.deleteForMe(conversation)).through}`);
  await qim.block(QIM_TO); // their direct messages to me are refused BLOCKED
  console.log(`blocked: ${(await qim.blocks()).join(', ')}`);
} catch (e) {
  console.error(`qim: ${e.message}`);
  process.exitCode = 1;
}
qim.close();

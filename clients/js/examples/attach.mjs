import WebSocket from 'ws';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { QimClient, directConversation, parseAttachmentsBody } from '@qim/client';

const { QIM_URL = 'ws://127.0.0.1:7400/', QIM_TOKEN, QIM_TO = 'bob', QIM_FILE } = process.env;
const qim = new QimClient({ url: QIM_URL, token: QIM_TOKEN, WebSocket });
try {
  const { user } = await qim.start();
  const bytes = readFileSync(QIM_FILE); // in a browser: pass the File of an <input type="file"> instead
  const file = { name: basename(QIM_FILE), type: 'text/plain', size: bytes.length, bytes };
  const conversation = directConversation(user, QIM_TO);
  const { ack } = await qim.sendFile(conversation, file, 'a file for you', {
    onProgress: (p) => console.log(`upload ${p.phase} ${p.loaded}/${p.total}`), // browsers: progress too
  });
  console.log(`stored as ${ack.message_id} in ${ack.conversation}`);
  // A reader: the body the server wrote, then a short-lived URL of each attachment.
  const [message] = (await qim.history(conversation, { limit: 1 })).messages;
  for (const a of parseAttachmentsBody(message.body)?.attachments ?? []) {
    const { url } = await qim.attachmentUrl(conversation, message.message_id, a, { thumbnail: a.thumbnail });
    console.log(`${a.kind} ${a.name} (${a.size} bytes): ${url}`);
  }
} catch (e) {
  console.error(`qim: ${e.message}`); // QimError ATTACHMENTS_DISABLED, UNSUPPORTED_TYPE, ...; QimUploadError
  process.exitCode = 1;
}
qim.close();

// The web chat page: plain DOM on the SDK (./sdk/ is the compiled clients/js, copied by its build).
// State lives in memory per tab: every sign-in syncs the mailbox from 0 (what the server retains), which
// rebuilds the conversation list; what was read is kept in localStorage, so unread counts survive a reload.
// Groups (`g:` conversations) come from GROUPS at sign-in and from their system entries; their member list
// is read with GROUP_MEMBERS when one is shown and again after each membership change (group.js).
import { QimClient, directConversation, isGroupConversation, isGroupSystemEntry, parseGroupEvent, peerOf } from './sdk/index.js';
import { initGroups, onGroupEvent, renderGroupPanel } from './group.js';

const $ = (id) => document.getElementById(id);
const conversations = new Map(); // id -> { id, peer, messages: Map(message_id|client_msg_id -> msg), readSeq, unread, oldest, more }
let client = null;
let me = null;
let open = null; // the conversation shown

function readKey(conv) {
  return `qim.read.${me}.${conv}`;
}

function conversation(id) {
  let c = conversations.get(id);
  if (!c) {
    c = { id, peer: peerOf(id, me) ?? id, messages: new Map(), unread: 0, oldest: null, more: true, loaded: false };
    // A group: its name (until known, its id), my role, its members (null until read), whether I am out.
    if (isGroupConversation(id)) c.group = { name: null, role: null, members: null, left: false };
    c.readSeq = BigInt(localStorage.getItem(readKey(id)) ?? '0');
    conversations.set(id, c);
  }
  return c;
}

function markRead(c) {
  let top = c.readSeq;
  for (const m of c.messages.values()) if (m.seq && BigInt(m.seq) > top) top = BigInt(m.seq);
  c.readSeq = top;
  c.unread = 0;
  localStorage.setItem(readKey(c.id), top.toString());
}

function title(c) {
  return c.group ? (c.group.name ?? c.id) : c.peer;
}

// One message into its conversation; own messages are matched by client_msg_id (the send's local copy).
// System entries by message id: all of one op's kind share their client_msg_id (`~group:<op>`).
function upsert(c, m) {
  const own = m.sender === me && !isGroupSystemEntry(m);
  const key = own ? `c:${m.client_msg_id}` : `m:${m.message_id}`;
  const had = c.messages.get(key);
  c.messages.set(key, { ...had, ...m, state: m.state ?? had?.state });
  return !had;
}

function renderList() {
  const ul = $('conversations');
  ul.replaceChildren();
  const sorted = [...conversations.values()].sort((a, b) => lastTime(b) - lastTime(a));
  for (const c of sorted) {
    const li = document.createElement('li');
    li.dataset.testid = 'conversation';
    if (c.group) {
      li.dataset.group = c.id;
      li.dataset.name = title(c);
      li.classList.add('group');
    } else li.dataset.peer = c.peer;
    if (open === c) li.classList.add('active');
    const last = [...c.messages.values()].sort(order).at(-1);
    const name = document.createElement('span');
    name.textContent = title(c);
    const preview = document.createElement('span');
    preview.className = 'preview';
    preview.textContent = last ? textOf(last) : '';
    name.append(preview);
    const badge = document.createElement('span');
    badge.className = 'unread';
    badge.dataset.testid = 'unread';
    badge.textContent = c.unread > 0 ? String(c.unread) : '';
    li.append(name, badge);
    li.onclick = () => show(c);
    ul.append(li);
  }
}

function lastTime(c) {
  let t = 0;
  for (const m of c.messages.values()) t = Math.max(t, m.server_time ?? Date.now());
  return t;
}

function order(a, b) {
  return (a.server_time ?? Number.MAX_SAFE_INTEGER) - (b.server_time ?? Number.MAX_SAFE_INTEGER);
}

// What a message says: a system entry's text (its JSON body parsed), else the body.
function textOf(m) {
  return isGroupSystemEntry(m) ? parseGroupEvent(m).text : m.body;
}

const STATE_TEXT = { sending: 'sending…', sent: 'sent ✓', delivered: 'delivered ✓✓', failed: 'failed' };

function renderChat() {
  if (!open) return;
  $('chat').hidden = false;
  $('chat-title').textContent = title(open);
  $('composer').hidden = open.group?.left === true;
  renderGroupPanel(open);
  $('older').hidden = !open.more;
  const ol = $('messages');
  const atBottom = ol.scrollHeight - ol.scrollTop - ol.clientHeight < 40;
  ol.replaceChildren();
  for (const m of [...open.messages.values()].sort(order)) {
    const li = document.createElement('li');
    if (isGroupSystemEntry(m)) {
      li.dataset.testid = 'system';
      li.className = 'system';
      li.textContent = textOf(m);
      ol.append(li);
      continue;
    }
    li.dataset.testid = 'message';
    const mine = m.sender === me;
    if (mine) li.classList.add('mine');
    li.textContent = m.body;
    const meta = document.createElement('span');
    meta.className = 'meta';
    const when = m.server_time ? new Date(m.server_time).toLocaleTimeString() : '';
    meta.textContent = mine ? `${when} · ${STATE_TEXT[m.state] ?? 'sent ✓'}` : `${m.sender} · ${when}`;
    if (mine) {
      meta.dataset.testid = 'delivery';
      li.dataset.state = m.state ?? 'sent';
    }
    li.append(meta);
    ol.append(li);
  }
  if (atBottom) ol.scrollTop = ol.scrollHeight;
}

async function loadOlder(c) {
  if (!c.more) return;
  const page = await client.history(c.id, { before: c.oldest ?? undefined, limit: 20 });
  for (const m of page.messages) upsert(c, { ...m, state: m.sender === me ? 'delivered' : undefined });
  // next_before: where to page on (a group's page may hold no message the member may read).
  if (page.next_before) c.oldest = page.next_before;
  else if (page.messages.length > 0) c.oldest = page.messages[page.messages.length - 1].message_id;
  c.more = page.more;
}

async function show(c) {
  open = c;
  markRead(c);
  renderList();
  renderChat();
  if (!c.loaded) {
    c.loaded = true;
    try {
      await loadOlder(c);
    } catch (e) {
      $('chat-error').textContent = String(e.message ?? e);
    }
    renderChat();
  }
}

function onEntry(e) {
  const c = conversation(e.conversation);
  // Our own entry coming back through our mailbox: the fanout has delivered it to the mailboxes.
  upsert(c, { ...e, state: e.sender === me ? 'delivered' : undefined });
  // System entries are shown, not counted: unread counts what people said.
  if (e.sender !== me && !isGroupSystemEntry(e) && BigInt(e.seq) > c.readSeq) {
    if (open === c && document.visibilityState !== 'hidden') markRead(c);
    else c.unread++;
  }
  renderList();
  if (open === c) renderChat();
}

async function sendMessage(c, body) {
  const clientMsgId = crypto.randomUUID();
  upsert(c, { sender: me, client_msg_id: clientMsgId, body, conversation: c.id, state: 'sending' });
  renderChat();
  try {
    const ack = await client.send({ conversation: c.id, body, clientMsgId });
    const m = c.messages.get(`c:${clientMsgId}`);
    upsert(c, {
      sender: me,
      client_msg_id: clientMsgId,
      message_id: ack.message_id,
      server_time: m?.server_time ?? ack.server_time,
      state: m?.state === 'delivered' ? 'delivered' : 'sent',
    });
  } catch (e) {
    upsert(c, { sender: me, client_msg_id: clientMsgId, state: 'failed' });
    $('chat-error').textContent = String(e.message ?? e);
  }
  renderList();
  renderChat();
}

async function signIn(user) {
  const device = sessionStorage.getItem('qim.device') ?? `web-${Math.random().toString(36).slice(2, 10)}`;
  sessionStorage.setItem('qim.device', device);
  const fetchToken = async () => {
    const r = await fetch(`/dev/token?user=${encodeURIComponent(user)}&device=${encodeURIComponent(device)}`);
    if (!r.ok) throw new Error(`token: ${r.status} ${(await r.text()).trim()}`);
    return (await r.json()).token;
  };
  await fetchToken(); // fails early with a readable message (e.g. dev tokens off)
  me = user;
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  client = new QimClient({ url: `${scheme}://${location.host}/`, token: fetchToken });
  client.on('message', onEntry);
  client.on('group', (g) => onGroupEvent(g));
  client.on('state', (s) => {
    $('state').textContent = s;
    $('state').className = `state ${s}`;
  });
  client.on('error', (e) => console.warn('qim:', e.message));
  initGroups({ client, me: () => me, conversation, show, render, current: () => open });
  await client.start();
  await loadGroups();
  $('me').textContent = `${user} (${device})`;
  $('signin').hidden = true;
  $('app').hidden = false;
}

function render() {
  renderList();
  renderChat();
}

// The groups I am in, into the list (also those without an entry above what the mailbox retains).
async function loadGroups() {
  for (const g of await client.groups()) {
    const c = conversation(g.group);
    c.group.name = g.name;
    c.group.role = g.role;
  }
  renderList();
}

$('signin').onsubmit = async (ev) => {
  ev.preventDefault();
  $('signin-error').textContent = '';
  try {
    await signIn($('user').value.trim());
  } catch (e) {
    $('signin-error').textContent = String(e.message ?? e);
  }
};
$('new-chat').onsubmit = (ev) => {
  ev.preventDefault();
  const peer = $('peer').value.trim();
  $('peer').value = '';
  void show(conversation(directConversation(me, peer)));
};
$('composer').onsubmit = (ev) => {
  ev.preventDefault();
  const body = $('body').value;
  $('body').value = '';
  if (open && body) void sendMessage(open, body);
};
$('older').onclick = async () => {
  await loadOlder(open);
  renderChat();
};
document.addEventListener('visibilitychange', () => {
  if (open && document.visibilityState === 'visible') {
    markRead(open);
    renderList();
  }
});

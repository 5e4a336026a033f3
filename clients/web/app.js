// The web chat page: plain DOM on the SDK (./sdk/ is the compiled clients/js, copied by its build).
// Sign-in gets a development token (session.js keeps it in sessionStorage, so a reload signs in again
// with it and "Sign out" forgets it); every sign-in and reload syncs the mailbox from 0 (what the server
// retains), which rebuilds the conversations' messages. The list's unread counts and read marks are the
// server's (CONVERSATIONS, kept current by the SDK): a conversation shown in a visible tab is marked read
// (READ), which clears it on the user's other devices too; "seen" and "delivered" come from RECEIPT and
// DELIVERED; typing and presence from the SDK's events (state.js, decision 79).
// Groups (`g:` conversations) come from GROUPS at sign-in and from their system entries; their member list
// is read with GROUP_MEMBERS when one is shown and again after each membership change (group.js).
// Rendering is view.js; words for errors, days and times are text.js; the Notifications toggle and the
// service worker's clicks are notify.js (sw.js shows what the push role sends).
import { QimClient, captionOf, directConversation, editedBody, isGroupSystemEntry, peerOf } from './sdk/index.js';
import { initGroups, onGroupEvent } from './group.js';
import { conversationFromAddress, initNotifications, resetNotifications, resumeNotifications } from './notify.js';
import {
  SignInError,
  dropToken,
  fetchToken,
  forgetSession,
  rememberOpen,
  rememberedOpen,
  storedSession,
  tabDevice,
  tokenSource,
} from './session.js';
import {
  applyDeleted,
  applyDelivered,
  applyList,
  applyReceipt,
  applyState,
  conversation,
  conversations,
  deliveryOf,
  markRead,
  mutedOf,
  oldestId,
  reset,
  state,
  upsert,
} from './state.js';
import { USER_NAME, USER_NAME_RULE, human, technical } from './text.js';
import { initView, render, renderChat, renderConnection, renderList } from './view.js';
import { toggleReaction } from './reactions.js';
import { endReply, startReply, takeReplyTo } from './reply.js';

const $ = (id) => document.getElementById(id);
const PAGE = 20; // messages per HISTORY page
const LIST_PAGE = 100; // conversations per CONVERSATIONS page
const LIST_MAX = 1000; // conversations read at sign-in, at most (the SDK keeps them current)
const PRESENCE_MAX = 100; // direct peers whose presence is followed explicitly

let errorTimer = null;
/** Shows an error in words under the chat (the technical text in the console and the tooltip). */
function showError(e, doing) {
  console.warn(`qim: ${doing || 'error'}:`, e);
  const p = $('chat-error');
  p.textContent = typeof e === 'string' ? e : human(e, doing);
  p.title = typeof e === 'string' ? '' : technical(e);
  clearTimeout(errorTimer);
  errorTimer = setTimeout(() => (p.textContent = ''), 10_000);
}

function visible() {
  return document.visibilityState !== 'hidden';
}

// The first page of history (older than every message held), then "Load older" pages on.
async function loadOlder(c) {
  if (c.loadingOlder || c.history === 'all') return;
  c.loadingOlder = true;
  if (c.history !== 'more') c.history = 'loading';
  renderChat();
  try {
    const page = await state.client.history(c.id, { before: c.before ?? oldestId(c), limit: PAGE });
    for (const m of page.messages) upsert(c, m);
    // `more` is the server's: older ones exist, and `next_before` says where to page on (a group's page
    // may hold no message this member may read). A page adds what is strictly older than what was held,
    // so the button never shows for nothing and never loads nothing.
    c.before = page.next_before ?? undefined;
    c.history = page.more && (page.messages.length > 0 || c.before) ? 'more' : 'all';
    c.prepended = page.messages.length > 0;
  } catch (e) {
    c.history = c.history === 'loading' ? 'error' : c.history;
    if (state.open === c) showError(e, 'history');
  } finally {
    c.loadingOlder = false;
  }
  if (state.open === c) renderChat();
}

async function show(c) {
  if (state.open !== c) {
    if (c) c.rendered = false;
    $('chat-error').textContent = '';
  }
  if (state.editing && state.editing.c !== c) endEdit();
  if (state.replying && state.replying.c !== c) endReply();
  state.open = c;
  rememberOpen(c?.id);
  if (!c) return render();
  if (visible()) markRead(c);
  render();
  if ((c.history === 'unknown' || c.history === 'error') && state.online) await loadOlder(c);
  if (c.group) void groupSeen(c);
  if (window.matchMedia('(min-width: 721px)').matches) $('body').focus({ preventScroll: true });
}

// A group's receipts come live (RECEIPT) while the page is open; what was read before, for the last of
// my messages, is asked once when the group is shown (RECEIPTS: a count, and who for a small group).
async function groupSeen(c) {
  const mine = [...c.messages.values()].filter((m) => m.sender === state.me && typeof m.message_id === 'string');
  const last = mine.reduce((a, m) => (a === null || BigInt(m.message_id) > BigInt(a.message_id) ? m : a), null);
  if (!last || deliveryOf(c, last) === 'seen' || !state.online) return;
  try {
    const r = await state.client.receipts(c.id, last.message_id);
    // Readers may include me (my own read mark passed it); without the names, more than one is someone else.
    const other = r.readers ? r.readers.find((u) => u !== state.me) : r.read_count > 1 ? '' : undefined;
    if (other !== undefined) {
      applyReceipt({ conversation: c.id, user: other, read_through: last.message_id });
      schedule();
    }
  } catch (e) {
    console.warn('qim: receipts:', e);
  }
}

// One render for all the entries of a SYNC page or a push (the SDK emits them one by one, synchronously).
let renderQueued = false;
function schedule() {
  if (renderQueued) return;
  renderQueued = true;
  queueMicrotask(() => {
    renderQueued = false;
    if (state.me !== null) render();
  });
}

function onEntry(e) {
  const c = conversation(e.conversation);
  // An edit or recall (or a kind this page does not know) is no bubble: the SDK folds it into its message
  // (the `messageState` event, applyState).
  const system = typeof e.client_msg_id === 'string' && e.client_msg_id.startsWith('~');
  if (system && !isGroupSystemEntry(e)) {
    if (state.open === c && visible()) markRead(c);
    return schedule();
  }
  // Our own entry coming back through our own mailbox says nothing of the peer's: "delivered" waits for
  // DELIVERED (state.js deliveryOf).
  const local = e.sender === state.me ? c.messages.get(`c:${e.client_msg_id}`) : undefined;
  if (local && e.reply_to === undefined) delete local.reply_to; // the server did not keep it as a reply
  upsert(c, e);
  // The entry is the message as sent: what the SDK knows of it since (a history page read first) wins.
  const now = state.client.messageState(e.message_id);
  if (now) applyState(now);
  if (state.open === c && visible()) markRead(c);
  schedule();
}

async function sendMessage(c, body, clientMsgId = crypto.randomUUID(), replyTo = undefined) {
  const local = { sender: state.me, client_msg_id: clientMsgId, body, conversation: c.id, state: 'sending' };
  if (replyTo !== undefined) local.reply_to = replyTo;
  upsert(c, local);
  render();
  try {
    const ack = await state.client.send({ conversation: c.id, body, clientMsgId, replyTo });
    const m = c.messages.get(`c:${clientMsgId}`);
    upsert(c, {
      sender: state.me,
      client_msg_id: clientMsgId,
      message_id: ack.message_id,
      server_time: m?.server_time ?? ack.server_time,
      state: 'sent',
    });
  } catch (e) {
    if (e?.code !== undefined && !e.retryable) {
      // Refused for what it is (too long, not allowed): trying again cannot help, so it goes back into
      // the composer to be changed, with the reason.
      c.messages.delete(`c:${clientMsgId}`);
      if (state.open === c && $('body').value === '') $('body').value = body;
    } else upsert(c, { sender: state.me, client_msg_id: clientMsgId, state: 'failed' }); // Retry may help
    if (state.open === c) showError(e, 'send');
  }
  render();
}

// Attachments (docs/protocol.md "Attachments"): the file goes straight to the object store (the SDK's
// sendFile: ATTACH, the upload with progress, then the SEND); the bar under the chat shows the upload.
async function sendFiles(c, files) {
  for (const file of files) {
    const bar = $('upload');
    bar.hidden = false;
    $('upload-name').textContent = file.name;
    $('upload-progress').value = 0;
    try {
      await state.client.sendFile(c.id, file, '', {
        onProgress: (p) => ($('upload-progress').value = p.total > 0 ? p.loaded / p.total : 0),
      });
    } catch (e) {
      if (state.open === c) showError(e, 'attach');
    } finally {
      bar.hidden = true;
    }
  }
}

// A short-lived URL of an attachment (thumbnail or the file), asked once per message and kind: the page
// re-renders often, the URL lives minutes.
const urls = new Map();
function attachmentUrl(c, m, a, thumbnail) {
  const key = `${m.message_id}/${a.attachment}/${thumbnail}`;
  const hit = urls.get(key);
  if (hit && hit.expires > Date.now() + 30_000) return hit.url;
  const url = state.client
    .attachmentUrl(c.id, m.message_id, a, { thumbnail })
    .then((ok) => ok.url)
    .catch((e) => {
      urls.delete(key);
      throw e;
    });
  urls.set(key, { url, expires: Date.now() + 4 * 60_000 });
  return url;
}

$('attach').onclick = () => $('file').click();
$('file').onchange = () => {
  const files = [...$('file').files];
  $('file').value = '';
  if (state.open && files.length) void sendFiles(state.open, files);
};
const chatPane = $('composer').parentElement;
chatPane.addEventListener('dragover', (ev) => {
  if (!state.open || !ev.dataTransfer?.types.includes('Files')) return;
  ev.preventDefault();
  chatPane.classList.add('dropping');
});
chatPane.addEventListener('dragleave', () => chatPane.classList.remove('dropping'));
chatPane.addEventListener('drop', (ev) => {
  chatPane.classList.remove('dropping');
  const files = [...(ev.dataTransfer?.files ?? [])];
  if (!state.open || !files.length) return;
  ev.preventDefault();
  void sendFiles(state.open, files);
});

// The groups I am in, into the list (also those without an entry above what the mailbox retains).
async function loadGroups() {
  try {
    for (const g of await state.client.groups()) {
      const c = conversation(g.group);
      c.group.name = g.name;
      c.group.role = g.role;
    }
  } catch (e) {
    console.warn('qim: groups:', e);
  }
  renderList();
}

// The server's conversation list, page after page (the SDK keeps it current afterwards: `conversations`
// events); then the direct peers' presence.
async function loadConversations(client) {
  try {
    let page = await client.conversations({ limit: LIST_PAGE });
    let read = page.conversations.length;
    while (page.next_before && read < LIST_MAX && state.client === client) {
      page = await client.conversations({ before: page.next_before, limit: LIST_PAGE });
      read += page.conversations.length;
    }
  } catch (e) {
    console.warn('qim: conversations:', e);
  }
  followPresence(client);
}

// Asks for the presence of the direct peers in the list (the most recent first, bounded); PRESENCE events
// follow. Asked again when a chat with someone new is opened.
const followed = new Set();
function followPresence(client, extra = null) {
  if (state.client !== client || !state.online) return;
  const peers = [...conversations.values()]
    .filter((c) => !c.group && c.peer !== state.me)
    .sort((a, b) => Number(BigInt(b.summary?.last?.seq ?? '0') - BigInt(a.summary?.last?.seq ?? '0')))
    .map((c) => c.peer);
  if (extra) peers.unshift(extra);
  const users = [...new Set(peers)].slice(0, PRESENCE_MAX);
  if (users.length === 0 || users.every((u) => followed.has(u))) return;
  followed.clear();
  for (const u of users) followed.add(u);
  client.subscribePresence(users).then(
    () => schedule(),
    (e) => {
      followed.clear();
      console.warn('qim: presence:', e);
    },
  );
}

function onState(client, s) {
  if (state.client !== client) return;
  const was = state.online;
  state.online = s === 'online';
  if (state.online) state.wasOnline = true;
  renderConnection(s);
  // Back online: what the outage kept from loading is read now.
  if (state.online && !was && state.open && (state.open.history === 'unknown' || state.open.history === 'error'))
    void loadOlder(state.open);
}

/** Signs in as user@device with the stored token or a fresh one; the page shows the app at once. */
function startSession(user, device, retried = false) {
  state.me = user;
  let refused = false;
  const source = tokenSource(user, device, () => refused);
  const client = new QimClient({
    url: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/`,
    token: async () => {
      const t = await source();
      refused = false;
      return t;
    },
  });
  state.client = client;
  client.on('message', (e) => state.client === client && onEntry(e));
  client.on('group', (g) => state.client === client && onGroupEvent(g));
  client.on('conversations', (rows) => {
    if (state.client !== client) return;
    applyList(rows);
    if (state.open && visible()) markRead(state.open);
    schedule();
  });
  client.on('receipt', (r) => state.client === client && (applyReceipt(r), schedule()));
  client.on('delivered', (d) => state.client === client && (applyDelivered(d), schedule()));
  client.on('messageState', (s) => state.client === client && applyState(s) && schedule());
  client.on('deleted', (d) => state.client === client && (applyDeleted(d), schedule()));
  client.on('block', (b) => {
    if (state.client !== client) return;
    if (b.blocked) state.blocked.add(b.user);
    else state.blocked.delete(b.user);
    schedule();
  });
  client.on('mute', (m) => {
    if (state.client !== client) return;
    conversation(m.conversation).mute = { muted: m.muted, muted_until: m.muted_until };
    schedule();
  });
  // Revoked (another device or an operator ended this session): the SDK asks for a new token once.
  client.on('revoked', () => state.client === client && dropToken());
  for (const event of ['typing', 'presence']) client.on(event, () => state.client === client && schedule());
  client.on('state', (s) => onState(client, s));
  client.on('synced', () => {
    if (state.client !== client || state.synced) return;
    state.synced = true;
    renderList();
  });
  client.on('error', (e) => {
    if (e?.code === 'UNAUTHENTICATED') refused = true;
    console.warn('qim:', technical(e));
  });
  initGroups({ client, me: () => state.me, conversation, show, render: schedule, current: () => state.open, showError });
  $('me').textContent = user;
  $('me').title = `${user} on device ${device}`;
  $('signin').hidden = true;
  $('app').hidden = false;
  renderConnection('connecting');
  // The conversation shown before a reload, or a notification's (only if it is one of this user's).
  const reopen = rememberedOpen();
  const mine = reopen && (reopen.startsWith('g:') || peerOf(reopen, user) !== null);
  void show(mine ? conversation(reopen) : null);
  followed.clear();
  client.start().then(
    () => {
      resumeNotifications(client);
      void loadGroups();
      void loadConversations(client);
      client.blocks().then(
        (users) => {
          if (state.client !== client) return;
          state.blocked = new Set(users);
          schedule();
        },
        (e) => console.warn('qim: blocks:', e),
      );
    },
    (e) => {
      if (state.client !== client) return;
      client.close();
      if (e?.code === 'UNAUTHENTICATED' && !retried) {
        dropToken(); // refused (expired, or another server's): a fresh one, once
        startSession(user, device, true);
        return;
      }
      signOut(human(e));
    },
  );
}

function signOut(message = '') {
  state.client?.close();
  forgetSession();
  reset();
  endReply();
  resetNotifications();
  document.title = 'QIM chat';
  $('offline').hidden = true;
  $('chat-error').textContent = '';
  $('new-group-box').open = false;
  $('app').hidden = true;
  $('signin').hidden = false;
  $('signin-error').textContent = message;
  $('user').focus();
}

$('signin').onsubmit = async (ev) => {
  ev.preventDefault();
  const user = $('user').value.trim();
  $('signin-error').textContent = '';
  if (!USER_NAME.test(user)) {
    $('signin-error').textContent = `“${user}” is not a valid user name: use ${USER_NAME_RULE}.`;
    return;
  }
  const button = $('signin-button');
  button.disabled = true;
  button.textContent = 'Signing in…';
  try {
    const device = tabDevice();
    await fetchToken(user, device); // fails early with a readable message (e.g. dev tokens off)
    startSession(user, device);
  } catch (e) {
    $('signin-error').textContent = e instanceof SignInError ? e.message : human(e);
  } finally {
    button.disabled = false;
    button.textContent = 'Sign in';
  }
};
$('signout').onclick = () => signOut();
$('back').onclick = () => void show(null);
$('new-chat').onsubmit = (ev) => {
  ev.preventDefault();
  const peer = $('peer').value.trim();
  if (!USER_NAME.test(peer)) {
    showError(`“${peer}” is not a valid user name: use ${USER_NAME_RULE}.`);
    return;
  }
  $('peer').value = '';
  void show(conversation(directConversation(state.me, peer)));
  followPresence(state.client, peer);
};
// Editing a message of mine: the composer holds its text (a message with attachments: its caption; an edit
// never changes the files, decision 152) until "Save" (or "Cancel").
function startEdit(c, m) {
  endReply();
  state.editing = { c, m };
  $('body').value = captionOf(m.body);
  $('send').textContent = 'Save';
  $('cancel-edit').hidden = false;
  $('body').focus();
}
function endEdit() {
  state.editing = null;
  $('body').value = '';
  $('send').textContent = 'Send';
  $('cancel-edit').hidden = true;
}
async function saveEdit(c, m, body) {
  endEdit();
  const before = { body: m.body, edited_at: m.edited_at, edit_count: m.edit_count };
  // Shown at once as the server will store it: the new text with the message's attachments.
  const shown = editedBody(m.body, body);
  Object.assign(m, { body: shown, edited_at: Date.now(), edit_count: (m.edit_count ?? 0) + 1 });
  render();
  try {
    await state.client.edit(c.id, m.message_id, body);
  } catch (e) {
    if ((m.edit_count ?? 0) === before.edit_count + 1 && m.body === shown) Object.assign(m, before); // not changed
    if (state.open === c) showError(e, 'edit');
    render();
  }
}
async function recallMessage(c, m) {
  try {
    await state.client.recall(c.id, m.message_id);
    Object.assign(m, { recalled: true, body: '' });
  } catch (e) {
    if (state.open === c) showError(e, 'recall');
  }
  render();
}
async function deleteForMe(c, m) {
  try {
    await state.client.deleteForMe(c.id, m.message_id);
    applyDeleted({ conversation: c.id, message_id: m.message_id });
  } catch (e) {
    if (state.open === c) showError(e, 'delete');
  }
  render();
}
// The conversation header's Block and Mute (the page's state follows the SDK's block and mute events).
async function toggleBlock(c) {
  try {
    if (state.blocked.has(c.peer)) await state.client.unblock(c.peer);
    else await state.client.block(c.peer);
  } catch (e) {
    showError(e, 'block');
  }
  render();
}
async function toggleMute(c) {
  try {
    if (mutedOf(c)) await state.client.unmute(c.id);
    else await state.client.mute(c.id);
  } catch (e) {
    showError(e, 'mute');
  }
  render();
}

$('cancel-edit').onclick = () => endEdit();
$('cancel-reply').onclick = () => endReply();
$('composer').onsubmit = (ev) => {
  ev.preventDefault();
  const body = $('body').value;
  if (!state.open || !body.trim() || !state.online) return;
  if (state.editing) {
    const { c, m } = state.editing;
    if (body !== captionOf(m.body)) void saveEdit(c, m, body);
    else endEdit();
    return;
  }
  $('body').value = '';
  state.client.typing(state.open.id, 'stop'); // sent: the others' indicator ends now (the message ends it too)
  void sendMessage(state.open, body, undefined, takeReplyTo(state.open));
};
// Typing: a start per keystroke (the SDK sends one every 3 s at most), a stop when the text is cleared or
// sent (the SDK sends a stop only after a start).
$('body').addEventListener('input', () => {
  if (!state.open || !state.online || state.open.group?.left) return;
  state.client.typing(state.open.id, $('body').value.trim() === '' ? 'stop' : 'start');
});
$('older').onclick = () => state.open && loadOlder(state.open);
document.addEventListener('visibilitychange', () => {
  if (state.open && visible()) {
    markRead(state.open);
    renderList();
  }
});

initView({
  show,
  retry: (c, m) => sendMessage(c, m.body, m.client_msg_id, m.reply_to),
  attachmentUrl,
  edit: startEdit,
  recall: recallMessage,
  react: (c, m, emoji, add) => toggleReaction({ client: () => state.client, render, error: showError }, c, m, emoji, add),
  reply: (c, m) => {
    if (state.editing) endEdit();
    startReply(c, m);
  },
  delete: deleteForMe,
  block: toggleBlock,
  mute: toggleMute,
});

// Notifications: the toggle, and a click on one opens its conversation (in this page, or in a new one
// through `?c=`, which is shown once signed in).
initNotifications({ client: () => state.client, open: (id) => state.me !== null && void show(conversation(id)) });
const asked = conversationFromAddress();
if (asked) rememberOpen(asked);

// A reload: the tab's session signs in again by itself.
const saved = storedSession();
if (saved) startSession(saved.user, saved.device);
else $('user').focus();

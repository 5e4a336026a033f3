// The web chat page: plain DOM on the SDK (./sdk/ is the compiled clients/js, copied by its build).
// Sign-in gets a development token (session.js keeps it in sessionStorage, so a reload signs in again
// with it and "Sign out" forgets it); every sign-in and reload syncs the mailbox from 0 (what the server
// retains), which rebuilds the conversation list; unread counts derive from what was read (state.js).
// Groups (`g:` conversations) come from GROUPS at sign-in and from their system entries; their member list
// is read with GROUP_MEMBERS when one is shown and again after each membership change (group.js).
// Rendering is view.js; words for errors, days and times are text.js.
import { QimClient, directConversation } from './sdk/index.js';
import { initGroups, onGroupEvent } from './group.js';
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
import { conversation, markRead, oldestId, readElsewhere, reset, state, upsert } from './state.js';
import { USER_NAME, USER_NAME_RULE, human, technical } from './text.js';
import { initView, render, renderChat, renderConnection, renderList } from './view.js';

const $ = (id) => document.getElementById(id);
const PAGE = 20; // messages per HISTORY page

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
    for (const m of page.messages) upsert(c, { ...m, state: m.sender === state.me ? 'delivered' : undefined });
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
  state.open = c;
  rememberOpen(c?.id);
  if (!c) return render();
  if (visible()) markRead(c);
  render();
  if ((c.history === 'unknown' || c.history === 'error') && state.online) await loadOlder(c);
  if (window.matchMedia('(min-width: 721px)').matches) $('body').focus({ preventScroll: true });
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
  // Our own entry coming back through our mailbox: the fanout has delivered it to the mailboxes.
  upsert(c, { ...e, state: e.sender === state.me ? 'delivered' : undefined });
  if (state.open === c && visible()) markRead(c);
  schedule();
}

async function sendMessage(c, body, clientMsgId = crypto.randomUUID()) {
  upsert(c, { sender: state.me, client_msg_id: clientMsgId, body, conversation: c.id, state: 'sending' });
  render();
  try {
    const ack = await state.client.send({ conversation: c.id, body, clientMsgId });
    const m = c.messages.get(`c:${clientMsgId}`);
    upsert(c, {
      sender: state.me,
      client_msg_id: clientMsgId,
      message_id: ack.message_id,
      server_time: m?.server_time ?? ack.server_time,
      state: m?.state === 'delivered' ? 'delivered' : 'sent',
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
  const reopen = rememberedOpen();
  void show(reopen ? conversation(reopen) : null);
  client.start().then(
    () => loadGroups(),
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
};
$('composer').onsubmit = (ev) => {
  ev.preventDefault();
  const body = $('body').value;
  if (!state.open || !body.trim() || !state.online) return;
  $('body').value = '';
  void sendMessage(state.open, body);
};
$('older').onclick = () => state.open && loadOlder(state.open);
document.addEventListener('visibilitychange', () => {
  if (state.open && visible()) {
    markRead(state.open);
    renderList();
  }
});
window.addEventListener('storage', (ev) => {
  if (readElsewhere(ev.key, ev.newValue)) renderList();
});

initView({ show, retry: (c, m) => sendMessage(c, m.body, m.client_msg_id) });

// A reload: the tab's session signs in again by itself.
const saved = storedSession();
if (saved) startSession(saved.user, saved.device);
else $('user').focus();

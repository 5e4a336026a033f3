// Rendering: the conversation list (avatars with an online dot, last message or "typing…", unread
// badges from the server, its loading and empty states), the chat (day separators, bubbles sized to their
// text, runs of one sender, delivery states up to "Seen", who is typing, the peer's presence, the
// loading / empty / beginning states, "Load older" only when the server said older messages exist), the
// connection (offline banner, composer disabled) and the tab title (the unread total). Which screen shows
// on a phone is the `chat-open` class of <main> (style.css: list or chat, not both).
import { isGroupSystemEntry } from './sdk/index.js';
import { conversations, deliveryOf, lastTime, sorted, state, systemPreview, textOf, title, totalUnread, unreadOf } from './state.js';
import { clock, dayLabel, dayOf, hue, initials, lastSeen, shortWhen, typingText } from './text.js';
import { renderGroupPanel } from './group.js';

const $ = (id) => document.getElementById(id);
// Delivery as ticks (their meaning in the tooltip and for screen readers): docs/running.md "The web chat page".
const STATE_TEXT = { sending: 'sending…', sent: '✓', delivered: '✓✓', seen: '✓✓', failed: 'not sent' };
const STATE_TITLE = {
  sending: 'sending…',
  sent: 'sent: stored by the server',
  delivered: 'delivered: in their mailbox',
  seen: 'seen',
  failed: 'not sent',
};
const CONNECTION_TEXT = { idle: 'Connecting…', connecting: 'Connecting…', online: 'Online', offline: 'Offline', closed: 'Signed out' };

let hooks = null; // { show(c), retry(c, m) }

export function initView(h) {
  hooks = h;
}

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

// `user`: a direct peer, whose presence puts a dot on the avatar while online.
export function avatar(name, group = false, user = null) {
  const a = el('span', group ? 'avatar group' : 'avatar', group ? '#' : initials(name));
  a.style.setProperty('--hue', String(hue(name)));
  a.setAttribute('aria-hidden', 'true');
  const p = user && state.client?.presence(user);
  if (p) {
    const dot = el('span', `dot ${p.status}`);
    dot.dataset.testid = 'presence';
    dot.dataset.status = p.status;
    a.append(dot);
  }
  return a;
}

// Who is typing in a conversation (never oneself), for the list and the chat.
function typers(c) {
  return (state.client?.typingUsers(c.id) ?? []).filter((u) => u !== state.me);
}

export function render() {
  renderList();
  renderChat();
}

export function renderList() {
  const ul = $('conversations');
  ul.replaceChildren();
  const list = [...conversations.values()].sort((a, b) => lastTime(b) - lastTime(a));
  for (const c of list) {
    const li = el('li');
    li.dataset.testid = 'conversation';
    if (c.group) {
      li.dataset.group = c.id;
      li.dataset.name = title(c);
      li.classList.add('group');
    } else li.dataset.peer = c.peer;
    if (state.open === c) li.classList.add('active');
    const last = sorted(c).at(-1) ?? c.summary?.last;
    const unread = unreadOf(c);
    if (unread !== '') li.classList.add('has-unread');
    const main = el('span', 'item');
    const top = el('span', 'row');
    top.append(el('span', 'name', title(c)), el('span', 'when', last?.server_time ? shortWhen(last.server_time) : ''));
    const bottom = el('span', 'row');
    let preview = 'No messages yet';
    const system = last ? systemPreview(last) : null;
    if (system !== null) preview = system;
    else if (last) preview = last.sender === state.me ? `You: ${last.body}` : c.group ? `${last.sender}: ${last.body}` : last.body;
    const typing = typers(c);
    const shownPreview = el('span', typing.length > 0 ? 'preview typing' : 'preview', typing.length > 0 ? typingText(typing, Boolean(c.group)) : preview);
    const badge = el('span', 'unread', unread);
    badge.dataset.testid = 'unread';
    bottom.append(shownPreview, badge);
    main.append(top, bottom);
    li.append(avatar(title(c), Boolean(c.group), c.group ? null : c.peer), main);
    li.onclick = () => hooks.show(c);
    ul.append(li);
  }
  const placeholder = $('list-state');
  if (!state.synced && list.length === 0) {
    placeholder.dataset.state = 'loading';
    placeholder.replaceChildren(el('span', 'spinner'), el('span', '', 'Loading conversations…'));
  } else if (list.length === 0) {
    placeholder.dataset.state = 'empty';
    placeholder.replaceChildren(
      el('strong', '', 'No conversations yet'),
      el('span', '', 'Type a name above to start one, or create a group.'),
    );
  } else placeholder.dataset.state = 'none';
  placeholder.hidden = placeholder.dataset.state === 'none';
  const n = totalUnread();
  document.title = n !== '' ? `(${n}) QIM chat` : 'QIM chat';
}

export function renderConnection(s) {
  const badge = $('state');
  badge.dataset.state = s;
  badge.textContent = CONNECTION_TEXT[s] ?? s;
  const down = !state.online && state.wasOnline;
  $('offline').hidden = !down;
  $('send').disabled = !state.online;
  $('body').placeholder = state.online ? 'Message' : 'Waiting for the connection…';
  $('app').classList.toggle('is-offline', down);
}

// One bubble: the body first (tests read `.body`), then time and delivery state; `seenLabel`: the last
// of one's own messages that was seen says so in words.
function bubble(c, m, run, seenLabel) {
  const li = el('li', 'msg');
  li.dataset.testid = 'message';
  const mine = m.sender === state.me;
  li.classList.add(mine ? 'mine' : 'theirs');
  if (run) li.classList.add('cont');
  if (c.group && !mine && !run) {
    const who = el('span', 'sender', m.sender);
    who.style.setProperty('--hue', String(hue(m.sender)));
    li.append(who);
  }
  li.append(el('span', 'body', m.body));
  const meta = el('span', 'meta');
  const when = m.server_time ? clock(m.server_time) : '';
  if (mine) {
    li.dataset.state = deliveryOf(c, m);
    const st = el('span', `delivery ${li.dataset.state}`, STATE_TEXT[li.dataset.state] ?? '✓');
    st.title = STATE_TITLE[li.dataset.state] ?? '';
    st.setAttribute('aria-label', st.title);
    st.dataset.testid = 'delivery';
    meta.append(el('span', 'time', when), st);
    if (seenLabel) {
      const seen = el('span', 'seen', 'Seen');
      seen.dataset.testid = 'seen';
      meta.append(seen);
    }
    if (m.state === 'failed') {
      const retry = el('button', 'retry', 'Retry');
      retry.type = 'button';
      retry.dataset.testid = 'retry';
      retry.onclick = () => hooks.retry(c, m);
      meta.append(retry);
    }
  } else meta.append(el('span', 'time', when));
  li.append(meta);
  return li;
}

export function renderChat() {
  const c = state.open;
  $('app').classList.toggle('chat-open', Boolean(c));
  $('no-chat').hidden = Boolean(c);
  $('chat').hidden = !c;
  if (!c) return;
  $('chat-title').textContent = title(c);
  const presence = c.group ? null : state.client?.presence(c.peer);
  $('chat-subtitle').textContent = c.group
    ? c.group.members
      ? `${c.group.members.length} member${c.group.members.length === 1 ? '' : 's'}`
      : 'Group'
    : presence?.status === 'online'
      ? 'Online'
      : presence?.last_seen
        ? lastSeen(presence.last_seen)
        : 'Direct message';
  $('chat-subtitle').dataset.presence = presence?.status ?? '';
  $('chat-avatar').replaceChildren(avatar(title(c), Boolean(c.group), c.group ? null : c.peer));
  const typing = typers(c);
  $('typing').textContent = typing.length > 0 ? typingText(typing, true) : '';
  $('typing').hidden = typing.length === 0;
  $('composer').hidden = c.group?.left === true;
  renderGroupPanel(c);

  const messages = sorted(c);
  const older = $('older');
  older.hidden = c.history !== 'more';
  older.disabled = c.loadingOlder;
  older.textContent = c.loadingOlder ? 'Loading…' : 'Load older messages';
  const note = $('chat-state');
  let noteState = 'none';
  if (messages.length === 0 && (c.history === 'unknown' || c.history === 'loading')) noteState = 'loading';
  else if (messages.length === 0 && c.history === 'error') noteState = 'error';
  else if (messages.length === 0) noteState = 'empty';
  else if (c.history === 'all') noteState = 'beginning';
  note.dataset.state = noteState;
  note.hidden = noteState === 'none';
  if (noteState === 'loading') note.replaceChildren(el('span', 'spinner'), el('span', '', 'Loading messages…'));
  else if (noteState === 'error') note.textContent = 'The messages could not be loaded. They will be read again when the connection is back.';
  else if (noteState === 'empty')
    note.replaceChildren(el('strong', '', 'No messages yet'), el('span', '', `Say hello to ${title(c)}.`));
  else if (noteState === 'beginning') note.textContent = c.group ? `The beginning of ${title(c)}` : `The beginning of your conversation with ${title(c)}`;

  const scroller = $('scroller');
  const top = scroller.scrollTop;
  const fromBottom = scroller.scrollHeight - top;
  const atBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 60;
  const ol = $('messages');
  ol.replaceChildren();
  let day = null;
  let prev = null;
  let lastSeenMine = null;
  for (const m of messages) if (m.sender === state.me && !isGroupSystemEntry(m) && deliveryOf(c, m) === 'seen') lastSeenMine = m;
  for (const m of messages) {
    const d = dayOf(m.server_time ?? Date.now());
    if (d !== day) {
      day = d;
      prev = null;
      const sep = el('li', 'day');
      sep.dataset.testid = 'day';
      sep.append(el('span', '', dayLabel(d)));
      ol.append(sep);
    }
    if (isGroupSystemEntry(m)) {
      const li = el('li', 'system', textOf(m));
      li.dataset.testid = 'system';
      ol.append(li);
      prev = null;
      continue;
    }
    const run = prev !== null && prev.sender === m.sender && (m.server_time ?? Date.now()) - (prev.server_time ?? 0) < 5 * 60_000;
    ol.append(bubble(c, m, run, m === lastSeenMine));
    prev = m;
  }
  // Just shown, or read to the bottom: stay at the bottom. Older ones prepended: the same messages stay in
  // view. Else (scrolled up while one arrives) the view does not move.
  if (!c.rendered || atBottom) scroller.scrollTop = scroller.scrollHeight;
  else if (c.prepended) scroller.scrollTop = scroller.scrollHeight - fromBottom;
  else scroller.scrollTop = top;
  c.rendered = true;
  c.prepended = false;
}

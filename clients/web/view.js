// Rendering: the conversation list (avatars with an online dot, last message or "typing…", unread
// badges from the server, its loading and empty states), the chat (day separators, bubbles sized to their
// text, runs of one sender, delivery states up to "Seen", who is typing, the peer's presence, the
// loading / empty / beginning states, "Load older" only when the server said older messages exist), the
// connection (offline banner, composer disabled) and the tab title (the unread total). Which screen shows
// on a phone is the `chat-open` class of <main> (style.css: list or chat, not both).
import { isGroupSystemEntry, parseAttachmentsBody } from './sdk/index.js';
import {
  conversations,
  deliveryOf,
  lastTime,
  mutedOf,
  sorted,
  state,
  systemPreview,
  textOf,
  title,
  totalUnread,
  unreadOf,
  quoteOf,
} from './state.js';
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

// { show(c), retry(c, m), edit(c, m), recall(c, m), delete(c, m), block(c), mute(c), react(c, m, emoji, add),
// reply(c, m) }
let hooks = null;

/** The reactions the menu offers (any emoji the server takes is shown when another client sends it). */
export const REACTIONS = ['👍', '❤️', '😂', '🎉', '😮'];

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
    if (mutedOf(c)) {
      li.classList.add('muted');
      li.dataset.muted = 'true';
    }
    const main = el('span', 'item');
    const top = el('span', 'row');
    top.append(el('span', 'name', title(c)), el('span', 'when', last?.server_time ? shortWhen(last.server_time) : ''));
    const bottom = el('span', 'row');
    let preview = 'No messages yet';
    const system = last ? systemPreview(last) : null;
    if (system !== null) preview = system;
    else if (last) {
      const text = textOf(last);
      preview = last.sender === state.me ? `You: ${text}` : c.group ? `${last.sender}: ${text}` : text;
    }
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
  if (m.recalled) li.classList.add('recalled');
  li.dataset.messageId = m.message_id ?? '';
  const quote = m.recalled ? null : quoteOf(c, m);
  if (quote) li.append(quoteBlock(quote));
  const files = m.recalled ? null : parseAttachmentsBody(m.body);
  if (files) {
    li.append(el('span', 'body', files.text));
    li.append(attachmentsOf(c, m, files.attachments));
  } else li.append(el('span', 'body', textOf(m)));
  if (!m.recalled && m.reactions?.length > 0) li.append(reactionsRow(c, m));
  const meta = el('span', 'meta');
  const when = m.server_time ? clock(m.server_time) : '';
  if (m.edit_count > 0 && !m.recalled) {
    const edited = el('span', 'edited', 'edited');
    edited.dataset.testid = 'edited';
    meta.append(edited);
  }
  const menu = messageMenu(c, m, mine);
  if (menu) li.append(menu);
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

// A message's attachments: images inline (their thumbnail when the server made one, else the image itself),
// a click opens the full file in a new tab; other files as a link with name and size.
function attachmentsOf(c, m, attachments) {
  const box = el('div', 'attachments');
  const open = (a) => (ev) => {
    ev.preventDefault();
    const tab = window.open('', '_blank');
    hooks.attachmentUrl(c, m, a, false).then(
      (url) => (tab ? (tab.location.href = url) : window.open(url, '_blank')),
      () => tab?.close(),
    );
  };
  for (const a of attachments) {
    const link = el('a', a.kind === 'image' ? 'attachment image' : 'attachment file');
    link.href = '#';
    link.onclick = open(a);
    if (a.kind === 'image') {
      link.dataset.testid = 'attachment-image';
      const img = el('img');
      img.alt = a.name;
      if (a.width && a.height) img.style.aspectRatio = `${a.width} / ${a.height}`;
      if (m.message_id) hooks.attachmentUrl(c, m, a, a.thumbnail === true).then((url) => (img.src = url), () => {});
      link.append(img);
    } else {
      link.dataset.testid = 'attachment-file';
      link.append(el('span', 'name', a.name), el('span', 'size', sizeText(a.size)));
    }
    box.append(link);
  }
  return box;
}

function sizeText(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

// The quoted message above a reply's body (its sender and text, or "message recalled").
function quoteBlock(q) {
  const box = el('blockquote', q.recalled ? 'quote recalled' : 'quote');
  box.dataset.testid = 'quote';
  if (q.sender) box.append(el('span', 'quote-sender', q.sender));
  box.append(el('span', 'quote-text', q.text));
  return box;
}

// A message's reactions: one chip per emoji with its count; mine are marked, a click takes mine back or
// adds it.
function reactionsRow(c, m) {
  const row = el('div', 'reactions');
  row.dataset.testid = 'reactions';
  for (const r of m.reactions) {
    const chip = el('button', r.mine ? 'reaction mine' : 'reaction', `${r.emoji} ${r.count}`);
    chip.type = 'button';
    chip.dataset.testid = 'reaction';
    chip.dataset.emoji = r.emoji;
    chip.dataset.count = String(r.count);
    chip.dataset.mine = String(r.mine);
    chip.setAttribute('aria-pressed', String(r.mine));
    chip.title = r.mine ? `Remove your ${r.emoji}` : `React ${r.emoji}`;
    chip.onclick = () => hooks.react(c, m, r.emoji, !r.mine);
    row.append(chip);
  }
  return row;
}

// A message's menu: a row of reactions and Reply for any stored one, Edit and Recall for one's own sent
// message, Delete (for me) for any stored one.
function messageMenu(c, m, mine) {
  if (typeof m.message_id !== 'string' || m.recalled || m.state === 'sending' || m.state === 'failed') return null;
  const menu = el('details', 'msg-menu');
  menu.dataset.testid = 'message-menu';
  const summary = el('summary', '', '⋯');
  summary.setAttribute('aria-label', 'Message actions');
  menu.append(summary);
  const item = (name, label, fn) => {
    const b = el('button', 'menu-item', label);
    b.type = 'button';
    b.dataset.testid = name;
    b.onclick = () => {
      menu.open = false;
      fn(c, m);
    };
    menu.append(b);
  };
  const picker = el('div', 'react-picker');
  for (const emoji of REACTIONS) {
    const b = el('button', 'react-pick', emoji);
    b.type = 'button';
    b.dataset.testid = 'react';
    b.dataset.emoji = emoji;
    const held = m.reactions?.find((r) => r.emoji === emoji)?.mine === true;
    if (held) b.classList.add('mine');
    b.setAttribute('aria-label', held ? `Remove your ${emoji}` : `React ${emoji}`);
    b.onclick = () => {
      menu.open = false;
      hooks.react(c, m, emoji, !held);
    };
    picker.append(b);
  }
  menu.append(picker);
  item('reply', 'Reply', hooks.reply);
  if (mine) {
    item('edit', 'Edit', hooks.edit);
    item('recall', 'Recall', hooks.recall);
  }
  item('delete', 'Delete for me', hooks.delete);
  return menu;
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
  const block = $('block');
  block.hidden = Boolean(c.group) || c.peer === state.me;
  block.textContent = state.blocked.has(c.peer) ? 'Unblock' : 'Block';
  block.dataset.blocked = String(state.blocked.has(c.peer));
  block.onclick = () => hooks.block(c);
  const mute = $('mute');
  mute.textContent = mutedOf(c) ? 'Unmute' : 'Mute';
  mute.dataset.muted = String(mutedOf(c));
  mute.onclick = () => hooks.mute(c);
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

// Replying from the page (decision 125): "Reply" in a message's menu shows the message above the composer;
// the next SEND carries its id as `reply_to`, and the reply shows a quote of it (view.js, state.js quoteOf).

import { state, textOf } from './state.js';

const $ = (id) => document.getElementById(id);

/** The composer replies to `m` of `c` (replaces an edit in progress). */
export function startReply(c, m) {
  state.replying = { c, m };
  $('replying-sender').textContent = m.sender;
  $('replying-text').textContent = textOf(m);
  $('replying').hidden = false;
  $('body').focus();
}

export function endReply() {
  state.replying = null;
  $('replying').hidden = true;
  $('replying-sender').textContent = '';
  $('replying-text').textContent = '';
}

/** The message id the next SEND in `c` replies to (and the reply bar closes), or undefined. */
export function takeReplyTo(c) {
  const r = state.replying;
  if (!r) return undefined;
  endReply();
  return r.c === c ? r.m.message_id : undefined;
}


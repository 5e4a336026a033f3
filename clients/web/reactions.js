// Reacting from the page (docs/protocol.md "Reactions"): a chip or the menu's picker adds or takes back my
// reaction. The chip changes at once; the SDK's fold (the event coming back through my mailbox, and every
// other member's) then gives the counts, the same live and after a reload (decision 145). A refusal puts
// the message back as it was and says why.

/** The message's reactions with mine added (`add`) or taken back, counts adjusted: the local guess. */
function guessed(reactions, emoji, add) {
  const list = (reactions ?? []).map((r) => ({ ...r }));
  const r = list.find((x) => x.emoji === emoji);
  if (add && !r) list.push({ emoji, count: 1, mine: true });
  else if (add && !r.mine) Object.assign(r, { count: r.count + 1, mine: true });
  else if (!add && r?.mine) Object.assign(r, { count: r.count - 1, mine: false });
  return list.filter((x) => x.count > 0);
}

/** `ctx`: { client(), render(), error(e, doing) }. */
export async function toggleReaction(ctx, c, m, emoji, add) {
  const before = m.reactions;
  m.reactions = guessed(before, emoji, add);
  ctx.render();
  try {
    if (add) await ctx.client().react(c.id, m.message_id, emoji);
    else await ctx.client().unreact(c.id, m.message_id, emoji);
  } catch (e) {
    // REACTION_UNCHANGED: the server already holds what was asked (another device did it): no error.
    if (e?.code !== 'REACTION_UNCHANGED') {
      const now = ctx.client().messageState(m.message_id);
      m.reactions = now ? now.reactions : before;
      ctx.error(e, 'react');
    }
  }
  ctx.render();
}

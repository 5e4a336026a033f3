// Groups on the web page: the create form, the member list of the group shown (with add, remove, leave
// for those whose role allows it) and what a membership change does to the page. The server decides who
// may do what (docs/protocol.md "Groups"); the page only hides buttons that would be refused.
import { USER_NAME, USER_NAME_RULE, human } from './text.js';

const $ = (id) => document.getElementById(id);
let ctx = null; // { client, me(), conversation(id), show(c), render(), current(), showError(e, doing) }
const loading = new Set(); // groups whose member list is being read

function showError(e, doing) {
  ctx.showError(e, doing);
}

function names(text) {
  return text
    .split(/[\s,]+/)
    .map((n) => n.trim())
    .filter((n) => n.length > 0);
}

/** Wires the forms for a session (called at each sign-in). */
export function initGroups(context) {
  ctx = context;
  $('new-group').onsubmit = async (ev) => {
    ev.preventDefault();
    const name = $('group-name').value.trim();
    const members = names($('group-members').value);
    $('group-error').textContent = '';
    const bad = members.find((m) => !USER_NAME.test(m));
    if (bad !== undefined) {
      $('group-error').textContent = `“${bad}” is not a valid user name: use ${USER_NAME_RULE}.`;
      return;
    }
    try {
      const ok = await ctx.client.createGroup(name, members);
      $('group-name').value = '';
      $('group-members').value = '';
      const c = ctx.conversation(ok.group);
      c.group.name = name;
      c.group.role = 'owner';
      c.group.left = false;
      $('new-group-box').open = false;
      await ctx.show(c);
    } catch (e) {
      console.warn('qim: create group:', e);
      $('group-error').textContent = human(e, 'group');
    }
  };
  $('add-member').onsubmit = async (ev) => {
    ev.preventDefault();
    const c = ctx.current();
    const members = names($('new-member').value);
    if (!c?.group || members.length === 0) return;
    const bad = members.find((m) => !USER_NAME.test(m));
    if (bad !== undefined) return showError(`“${bad}” is not a valid user name: use ${USER_NAME_RULE}.`);
    $('new-member').value = '';
    await change(c, () => ctx.client.addMembers(c.id, members), 'add');
  };
  $('leave').onclick = async () => {
    const c = ctx.current();
    if (c?.group) await change(c, () => ctx.client.leaveGroup(c.id), 'leave');
  };
}

// A membership op, then the member list read again (GROUP_OK: the change is applied when it comes).
async function change(c, op, doing) {
  $('chat-error').textContent = '';
  try {
    await op();
  } catch (e) {
    showError(e, doing);
  }
  await refreshMembers(c);
}

async function refreshMembers(c) {
  if (loading.has(c.id)) return;
  loading.add(c.id);
  try {
    const list = await ctx.client.members(c.id);
    c.group.name = list.name;
    c.group.members = list.members;
    c.group.role = list.members.find((m) => m.user === ctx.me())?.role ?? null;
    c.group.left = c.group.role === null;
  } catch (e) {
    if (e?.code === 'NOT_A_MEMBER' || e?.code === 'UNKNOWN_GROUP') {
      c.group.left = true;
      c.group.members = [];
      c.group.role = null;
    } else {
      c.group.members = []; // shown empty until the next change reads it again (no retry loop)
      showError(e, 'members');
    }
  } finally {
    loading.delete(c.id);
  }
  ctx.render();
}

/** A membership change arrived in the mailbox (a `group` event of the SDK). */
export function onGroupEvent(g) {
  if (!ctx) return;
  const c = ctx.conversation(g.group);
  const me = ctx.me();
  if (g.name && (g.op === 'create' || g.op === 'rename')) c.group.name = g.name;
  if ((g.op === 'remove' && g.members.includes(me)) || (g.op === 'leave' && g.by === me)) {
    c.group.left = true;
    c.group.members = [];
    c.group.role = null;
  } else if ((g.op === 'add' && g.members.includes(me)) || g.op === 'create') {
    c.group.left = false;
    c.group.members = null;
  } else if (!c.group.left) c.group.members = null; // stale: read again when shown
  if (!c.group.left && (c.group.name === null || ctx.current() === c)) void refreshMembers(c);
  ctx.render();
}

/** The member list of the conversation shown (hidden for a direct one). */
export function renderGroupPanel(c) {
  const panel = $('group-panel');
  panel.hidden = !c.group;
  if (!c.group) return;
  if (c.group.members === null && !c.group.left) {
    void refreshMembers(c);
    return;
  }
  const me = ctx.me();
  const role = c.group.role;
  const ul = $('members');
  ul.replaceChildren();
  for (const m of c.group.members ?? []) {
    const li = document.createElement('li');
    li.dataset.testid = 'member';
    li.dataset.user = m.user;
    li.dataset.role = m.role;
    li.textContent = m.role === 'member' ? m.user : `${m.user} (${m.role})`;
    const mayRemove = m.user !== me && (role === 'owner' ? m.role !== 'owner' : role === 'admin' && m.role === 'member');
    if (mayRemove) {
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.testid = 'remove';
      b.textContent = '×';
      b.title = `Remove ${m.user}`;
      b.setAttribute('aria-label', `Remove ${m.user}`);
      b.onclick = () => change(c, () => ctx.client.removeMembers(c.id, [m.user]), 'remove');
      li.append(b);
    }
    ul.append(li);
  }
  $('add-member').hidden = c.group.left || !(role === 'owner' || role === 'admin');
  $('leave').hidden = c.group.left || role === 'owner';
  $('left-note').hidden = !c.group.left;
}

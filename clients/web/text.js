// What the page says to people: errors in plain words (the protocol's codes and the SDK's transport
// errors mapped to what happened and what to do; the technical text goes to the console and to the
// element's title), day labels, times, initials and colours for avatars. Pure functions, no DOM state.

/** A user name as the server accepts it (the sign-in and "chat with" inputs check it first). */
export const USER_NAME = /^[A-Za-z0-9_.@-]{1,64}$/;
export const USER_NAME_RULE = 'letters, digits and _ . @ - (up to 64)';

/** Why the development sign-in (`GET /dev/token`) failed, from its HTTP status. */
export function tokenRefusal(status, user) {
  if (status === 404)
    return 'This server does not offer development sign-in. Start it with QIM_WEB_DEV_TOKENS=1 (scripts/run.sh does).';
  if (status === 403) return 'Development sign-in only works from this machine (a loopback address).';
  if (status === 400) return `“${user}” is not a valid user name: use ${USER_NAME_RULE}.`;
  return `The server could not sign you in (HTTP ${status}). Try again in a moment.`;
}

/**
 * An error of the SDK (QimError with its protocol code, QimTimeoutError, QimConnectionError) or of
 * fetch, in words for the person using the page. `doing` names the action ("send", "open", "group").
 */
export function human(e, doing = '') {
  switch (e?.code) {
    case 'TOO_LARGE':
      return doing === 'attach'
        ? 'That file is too large to send.'
        : 'That message is too long to send. Split it into shorter ones.';
    case 'ATTACHMENTS_DISABLED':
      return 'This server does not take files.';
    case 'UNSUPPORTED_TYPE':
      return 'This kind of file cannot be sent here.';
    case 'QUOTA_EXCEEDED':
      return 'You have sent as many files as you may today. Try again tomorrow.';
    case 'ATTACHMENT_MISSING':
    case 'ATTACHMENT_MISMATCH':
      return 'The file did not arrive whole. Try again.';
    case 'UNKNOWN_ATTACHMENT':
      return 'That file is not there any more.';
    case 'RATE_LIMITED':
      return 'You are sending too fast. Wait a moment and try again.';
    case 'FORBIDDEN':
      return 'You cannot read or write in this conversation.';
    case 'NOT_A_MEMBER':
      return 'You are not a member of this group.';
    case 'UNKNOWN_GROUP':
      return 'This group does not exist.';
    case 'NOT_ALLOWED':
      if (doing === 'edit') return 'Only its sender can edit a message.';
      if (doing === 'recall') return 'Only its sender (or a group’s owner or admin) can recall a message.';
      return doing === 'leave'
        ? 'The owner cannot leave the group.'
        : 'Only the group’s owner or an admin can do that.';
    case 'GROUP_FULL':
      return 'The group is full: no more members can be added.';
    case 'BLOCKED':
      return 'You cannot message this person: they have blocked you.';
    case 'UNKNOWN_MESSAGE':
      return 'That message is not there any more.';
    case 'WINDOW_PASSED':
      return doing === 'recall' ? 'It is too late to recall that message.' : 'It is too late to edit that message.';
    case 'MESSAGE_RECALLED':
      return 'That message was recalled.';
    case 'UNAVAILABLE':
      return 'The server is busy right now. Try again in a moment.';
    case 'UNAUTHENTICATED':
      return 'Your session is no longer valid. Sign in again.';
    case 'INVALID_ARGUMENT':
      return doing === 'group'
        ? `The server did not accept that group: check the name and the member names (${USER_NAME_RULE}).`
        : 'The server did not accept that request.';
    case undefined:
      break;
    default:
      return 'The server could not do that. Try again.';
  }
  if (e?.name === 'QimUploadError') return 'The file could not be uploaded. Try again.';
  if (e?.name === 'QimTimeoutError') return 'The server did not answer in time. Try again.';
  if (e?.name === 'QimConnectionError') return 'You are offline. Try again once the connection is back.';
  if (e instanceof TypeError) return 'Cannot reach the server. Is it running?';
  return 'Something went wrong. Try again.';
}

/** The technical text of an error, for the console and a tooltip. */
export function technical(e) {
  return String(e?.message ?? e);
}

function startOfDay(t) {
  const d = new Date(t);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

/** The local day of a time (a key for day separators). */
export function dayOf(t) {
  return startOfDay(t);
}

/** "Today", "Yesterday", a weekday within the week, else a date. */
export function dayLabel(day, now = Date.now()) {
  const today = startOfDay(now);
  const days = Math.round((today - day) / 86_400_000);
  if (days === 0) return 'Today';
  if (days === 1) return 'Yesterday';
  const d = new Date(day);
  if (days > 1 && days < 7) return d.toLocaleDateString(undefined, { weekday: 'long' });
  const sameYear = d.getFullYear() === new Date(now).getFullYear();
  return d.toLocaleDateString(undefined, { day: 'numeric', month: 'long', year: sameYear ? undefined : 'numeric' });
}

/** Hours and minutes. */
export function clock(t) {
  return new Date(t).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

/** For the conversation list: the time today, else the day. */
export function shortWhen(t, now = Date.now()) {
  if (!t) return '';
  if (startOfDay(t) === startOfDay(now)) return clock(t);
  const days = Math.round((startOfDay(now) - startOfDay(t)) / 86_400_000);
  if (days === 1) return 'Yesterday';
  return new Date(t).toLocaleDateString(undefined, { day: 'numeric', month: 'short' });
}

/** One or two letters for an avatar. The test names (alice_123_4) give "A". */
export function initials(name) {
  const words = String(name)
    .replace(/_\d+(_\d+)*$/, '')
    .split(/[\s._@-]+/)
    .filter(Boolean);
  if (words.length === 0) return '?';
  const letters = words.length > 1 ? words[0][0] + words[1][0] : words[0].slice(0, 1);
  return letters.toUpperCase();
}

/** A stable hue for a name (avatars). */
export function hue(name) {
  let h = 0;
  for (const ch of String(name)) h = (h * 31 + ch.codePointAt(0)) % 360;
  return h;
}

/** "alice is typing…", "alice and bob are typing…", "3 people are typing…"; a direct chat: "typing…". */
export function typingText(users, group) {
  if (!group) return 'typing…';
  if (users.length === 1) return `${users[0]} is typing…`;
  if (users.length === 2) return `${users[0]} and ${users[1]} are typing…`;
  return `${users.length} people are typing…`;
}

/** A user's last seen time, for a chat's header. */
export function lastSeen(t, now = Date.now()) {
  if (startOfDay(t) === startOfDay(now)) return `Last seen today at ${clock(t)}`;
  const days = Math.round((startOfDay(now) - startOfDay(t)) / 86_400_000);
  if (days === 1) return `Last seen yesterday at ${clock(t)}`;
  return `Last seen ${new Date(t).toLocaleDateString(undefined, { day: 'numeric', month: 'short' })}`;
}

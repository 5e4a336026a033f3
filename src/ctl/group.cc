#include <ostream>

#include "core/conversation.h"
#include "ctl/commands.h"

namespace qim::ctl {

namespace {

// The frame type of each `qimctl group` action.
std::string frame_type(const std::string& action) {
  if (action == "list") return "GROUPS";
  if (action == "members") return "GROUP_MEMBERS";
  if (action == "role") return "GROUP_ROLE";
  std::string type = "GROUP_";
  for (char c : action) type.push_back(static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c));
  return type;
}

}  // namespace

int run_group(const GroupCommand& r, std::ostream& out, std::ostream& err) {
  // Checked before connecting, with the gateway's rules (docs/protocol.md "Groups").
  if (!r.fields.group.empty()) {
    auto c = Conversation::parse(r.fields.group);
    if (!c.ok()) return fail(err, "group --group", c.error());
    if (c->group_id() == nullptr) {
      return fail(err, "group --group",
                  Error(Errc::kInvalidArgument, "'" + r.fields.group + "' is not a group ('g:<group id>')"));
    }
  }
  for (const auto& m : r.fields.members) {
    if (auto u = UserId::parse(m); !u.ok()) return fail(err, "group --member", u.error());
  }
  auto session = open_session(r.connection);
  if (!session.ok()) return fail(err, session.error());
  auto reply = session->client->group(frame_type(r.action), r.fields);
  if (!reply.ok()) return fail(err, "group " + r.action, reply.error());
  if (reply->type == "GROUP_OK") {
    out << "group=" << reply->group << " op=" << reply->op << " message_id=" << reply->message_id << '\n';
  } else if (reply->type == "GROUPS_LIST") {
    for (const auto& g : reply->items) {
      out << "group=" << g.id << " role=" << g.role << " members=" << g.members << " name=" << g.name << '\n';
    }
  } else {
    for (const auto& m : reply->items) out << "user=" << m.id << " role=" << m.role << '\n';
  }
  return 0;
}

}  // namespace qim::ctl

// A mistyped command names the commands there are (issue 37, item 3).
#include "ctl/usage.h"

#include <gtest/gtest.h>

#include <vector>

namespace qim::ctl {
namespace {

struct Line {
  std::vector<const char*> argv;
  int argc() const { return static_cast<int>(argv.size()); }
};

TEST(UnknownCommand, NamesTheCommandsThereAre) {
  CLI::App app{"test"};
  app.require_subcommand(1);
  app.add_subcommand("send", "");
  auto* group = app.add_subcommand("group", "");
  group->require_subcommand(1);
  group->add_subcommand("create", "");
  group->add_subcommand("list", "");

  Line typo{{"qimctl", "sned", "--token", "x"}};
  EXPECT_EQ(unknown_command(app, "qimctl", typo.argc(), typo.argv.data()),
            "qimctl: unknown command 'sned'; the commands are: send, group (qimctl --help)\n");
  Line nested{{"qimctl", "group", "make"}};
  EXPECT_EQ(unknown_command(app, "qimctl", nested.argc(), nested.argv.data()),
            "qimctl group: unknown command 'make'; the commands are: create, list (qimctl group --help)\n");
  for (Line fine : {Line{{"qimctl", "send", "--to", "bob", "hi"}}, Line{{"qimctl", "--help"}},
                    Line{{"qimctl", "group", "list", "--token", "x"}}, Line{{"qimctl"}}}) {
    EXPECT_EQ(unknown_command(app, "qimctl", fine.argc(), fine.argv.data()), std::nullopt) << fine.argv[1];
  }
}

}  // namespace
}  // namespace qim::ctl

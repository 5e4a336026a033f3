#include "app/instance_files.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <fstream>

#include "app/admin_routes.h"
#include "log/testing/temp_dir.h"

namespace qim {
namespace {

TEST(InstanceFilesTest, TheDevSecretIsCreatedOnceAndKeptPrivate) {
  testing::TempDir dir;
  EXPECT_FALSE(load_dev_secret(dir.path())->has_value());
  const std::string first = load_or_create_dev_secret(dir.path()).value();
  EXPECT_EQ(first.size(), 64u);
  EXPECT_EQ(load_or_create_dev_secret(dir.path()).value(), first);
  EXPECT_EQ(load_dev_secret(dir.path())->value(), first);
  struct stat st {};
  ASSERT_EQ(::stat(dir.sub("auth-secret").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// The secret is never written into a file someone else may already hold open: not the fixed temporary
// name a writer could pre-create (world-readable, kept open), nor a file readable before a chmod.
TEST(InstanceFilesTest, TheDevSecretIsNeverWrittenIntoAFileAnotherProcessHoldsOpen) {
  testing::TempDir dir;
  const std::string planted = dir.sub("auth-secret.tmp");
  const int fd = ::open(planted.c_str(), O_RDWR | O_CREAT | O_EXCL, 0666);
  ASSERT_GE(fd, 0);
  ::fchmod(fd, 0666);
  const std::string secret = load_or_create_dev_secret(dir.path()).value();
  char buf[128] = {};
  const ssize_t seen = ::pread(fd, buf, sizeof buf, 0);
  ::close(fd);
  EXPECT_EQ(seen, 0) << "the secret went through a file another process had open: " << std::string(buf);
  struct stat st {};
  ASSERT_EQ(::stat(dir.sub("auth-secret").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(load_dev_secret(dir.path())->value(), secret);
  // Nothing is left beside it but the planted file.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 2);
}

TEST(InstanceFilesTest, RunningFileRoundTripsAndIsRemoved) {
  testing::TempDir dir;
  EXPECT_FALSE(read_running_file(dir.path())->has_value());
  ASSERT_TRUE(write_running_file(dir.path(), RunningInstance{4242, 7400, 7401, 3, 4}).ok());
  auto r = read_running_file(dir.path()).value();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->pid, 4242);
  EXPECT_EQ(r->gateway_port, 7400);
  EXPECT_EQ(r->admin_port, 7401);
  EXPECT_EQ(r->epoch, 3u);
  EXPECT_EQ(r->shards, 4u);
  // A file an older qim left (no shard count) still parses.
  std::ofstream(dir.sub("running.json"), std::ios::trunc)
      << R"({"pid":7,"gateway_port":1,"admin_port":2,"epoch":1})"
      << "\n";
  r = read_running_file(dir.path()).value();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->pid, 7);
  EXPECT_EQ(r->shards, 0u);
  remove_running_file(dir.path());
  EXPECT_FALSE(read_running_file(dir.path())->has_value());
  std::ofstream(dir.sub("running.json")) << "{\"pid\":";
  EXPECT_EQ(read_running_file(dir.path()).code(), Errc::kCorruptEntry);
}

TEST(AdminRoutesTest, QueryParameters) {
  EXPECT_EQ(query_param("offset=12&partition=3", "offset"), "12");
  EXPECT_EQ(query_param("offset=12&partition=3", "partition"), "3");
  EXPECT_EQ(query_param("offset=12", "partition"), std::nullopt);
  EXPECT_EQ(query_param("xoffset=1&offset=2", "offset"), "2");
  EXPECT_EQ(query_param("", "offset"), std::nullopt);
}

// `qim admin ...` beside a running `qim up` says which process holds the directory (issue 37), and a
// stale running.json of a process that is gone does not stop it.
TEST(InstanceFiles, RefusesADirectoryALiveQimUpHolds) {
  testing::TempDir dir;
  EXPECT_TRUE(refuse_if_in_use(dir.path(), "qim admin mailbox read").ok());
  RunningInstance me;
  me.pid = ::getpid();
  ASSERT_TRUE(write_running_file(dir.path(), me).ok());
  Status s = refuse_if_in_use(dir.path(), "qim admin mailbox read");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("in use by `qim up` (pid " + std::to_string(me.pid)), std::string::npos)
      << s.error().message();
  EXPECT_NE(s.error().message().find("run `qim admin mailbox read` again"), std::string::npos);
  RunningInstance gone;
  gone.pid = 0x7ffffff0;  // above any pid_max
  ASSERT_TRUE(write_running_file(dir.path(), gone).ok());
  EXPECT_TRUE(refuse_if_in_use(dir.path(), "qim admin mailbox read").ok());
}

}  // namespace
}  // namespace qim

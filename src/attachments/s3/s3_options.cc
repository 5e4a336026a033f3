#include "attachments/s3/s3_options.h"

#include <fstream>
#include <string_view>

namespace qim::attachments {
namespace {

Error config_error(const std::string& variable, std::string_view what) {
  return Error(Errc::kConfig, variable + ": " + std::string(what));
}

// A URL QIM can talk to: a scheme we speak, a host, no query (the signature appends one).
Status check_endpoint(const std::string& variable, const std::string& url) {
  std::string_view rest;
  if (url.starts_with("http://")) {
    rest = std::string_view(url).substr(7);
  } else if (url.starts_with("https://")) {
    rest = std::string_view(url).substr(8);
  } else {
    return config_error(variable, "'" + url + "' is not an http:// or https:// URL");
  }
  if (rest.empty() || rest.front() == '/' || rest.front() == ':') {
    return config_error(variable, "'" + url + "' names no host");
  }
  if (rest.find_first_of("?# ") != std::string_view::npos) {
    return config_error(variable, "'" + url + "' has a query, a fragment or a space");
  }
  return ok_status();
}

// NAME or NAME_FILE (its first line; a secret kept out of the environment), never both. Empty: missing.
Result<std::string> value_or_file(const S3EnvLookup& getenv, const std::string& name) {
  auto direct = getenv(name);
  auto file = getenv(name + "_FILE");
  if (direct && !direct->empty() && file && !file->empty()) {
    return config_error(name, "set both " + name + " and " + name + "_FILE; set one");
  }
  if (file && !file->empty()) {
    std::ifstream in(*file);
    std::string line;
    if (!in || !std::getline(in, line)) return config_error(name + "_FILE", "cannot read '" + *file + "'");
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty()) return config_error(name + "_FILE", "the first line of '" + *file + "' is empty");
    return line;
  }
  if (!direct || direct->empty()) return config_error(name, "missing (required when QIM_S3_ENDPOINT is set)");
  return *direct;
}

}  // namespace

Result<std::optional<S3Config>> s3_config_from_env(const S3EnvLookup& getenv) {
  auto endpoint = getenv("QIM_S3_ENDPOINT");
  if (!endpoint || endpoint->empty()) return std::optional<S3Config>();
  S3Config c;
  c.endpoint = *endpoint;
  while (c.endpoint.size() > 1 && c.endpoint.back() == '/') c.endpoint.pop_back();
  QIM_RETURN_IF_ERROR(check_endpoint("QIM_S3_ENDPOINT", c.endpoint));
  c.public_endpoint = c.endpoint;
  if (auto p = getenv("QIM_S3_PUBLIC_ENDPOINT"); p && !p->empty()) {
    c.public_endpoint = *p;
    while (c.public_endpoint.size() > 1 && c.public_endpoint.back() == '/') c.public_endpoint.pop_back();
    QIM_RETURN_IF_ERROR(check_endpoint("QIM_S3_PUBLIC_ENDPOINT", c.public_endpoint));
  }
  if (auto r = getenv("QIM_S3_REGION"); r && !r->empty()) c.region = *r;
  auto bucket = getenv("QIM_S3_BUCKET");
  if (!bucket || bucket->empty())
    return config_error("QIM_S3_BUCKET", "missing (required when QIM_S3_ENDPOINT is set)");
  // S3's bucket naming rules, the part a typo breaks: 3-63 of [a-z0-9.-].
  if (bucket->size() < 3 || bucket->size() > 63 ||
      bucket->find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.-") != std::string::npos) {
    return config_error("QIM_S3_BUCKET", "'" + *bucket + "' is not a bucket name (3-63 of a-z 0-9 . -)");
  }
  c.bucket = *bucket;
  QIM_ASSIGN_OR_RETURN(c.access_key, value_or_file(getenv, "QIM_S3_ACCESS_KEY"));
  QIM_ASSIGN_OR_RETURN(c.secret_key, value_or_file(getenv, "QIM_S3_SECRET_KEY"));
  if (auto p = getenv("QIM_S3_PATH_STYLE"); p && !p->empty()) {
    if (*p == "1" || *p == "true") {
      c.path_style = true;
    } else if (*p == "0" || *p == "false") {
      c.path_style = false;
    } else {
      return config_error("QIM_S3_PATH_STYLE", "'" + *p + "' is not 1, true, 0 or false");
    }
  }
  return std::optional<S3Config>(std::move(c));
}

}  // namespace qim::attachments

// `twinbench data make-shard`: byte-level token shards from any text file, so that
// "loss falls on real text" can be a test.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "harness/cli/common.h"
#include "harness/run/train/token_shard.h"

namespace twinbench::cli {

void add_data_command(CLI::App& app, int& exit_code) {
  auto* data = app.add_subcommand("data", "token shard utilities");
  data->require_subcommand(1);
  struct Opts {
    std::vector<std::string> texts;
    std::string out;
  };
  auto o = std::make_shared<Opts>();
  auto* make = data->add_subcommand("make-shard", "tokenize text files byte-level (vocabulary 256) into a shard");
  make->add_option("--text", o->texts, "input text file(s)")->required()->check(CLI::ExistingFile);
  make->add_option("--out", o->out, "output shard (.bin)")->required();
  make->callback([o, &exit_code] {
    std::string text;
    for (const auto& path : o->texts) {
      std::ifstream in(path, std::ios::binary);
      std::ostringstream ss;
      ss << in.rdbuf();
      text += ss.str();
    }
    const auto tokens = byte_tokens(text);
    write_token_shard(o->out, tokens);
    std::cerr << fmt::format("wrote {} byte tokens to {}\n", tokens.size(), o->out);
    exit_code = kExitOk;
  });
}

}  // namespace twinbench::cli

// Devices from the command line, as a user meets them on a machine without a
// GPU: plans against a GPU's memory, a refused --device, and an out-of-memory
// run that ends as an outcome while the matrix goes on.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_harness.h"
#include "db_queries.h"

namespace twinbench::testing {
namespace {

const CliHarness& harness() {
  static const CliHarness h("device");
  return h;
}
Result twinbench(const std::string& args) { return harness().run(args); }

nlohmann::json plan_json(const std::string& args) {
  const Result r = twinbench("plan " + args + " --json");
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(DeviceCli, PlanSaysWhatFitsAnEightyGigabyteGpu) {
  const auto one_b = plan_json("--case 06_1b --device-memory 80GiB");
  EXPECT_EQ(one_b["device"], "gpu");
  EXPECT_EQ(one_b["device_capacity_bytes"].get<int64_t>(), 80LL << 30);
  EXPECT_TRUE(one_b["fits"].get<bool>());
  EXPECT_GT(one_b["largest_batch_that_fits"].get<int64_t>(), 1);
  EXPECT_EQ(one_b["dtype"], "bf16");  // a GPU plan is bf16 mixed precision unless train.dtype says otherwise
  EXPECT_GT(one_b["memory_breakdown_bytes"]["compute_weights"].get<int64_t>(), 0);
  // On one device (07_8b asks for 8): 8B's sharded state alone is 16 B/param.
  const auto eight_b = plan_json("--case 07_8b --devices 1 --device-memory 80GiB");
  EXPECT_FALSE(eight_b["fits"].get<bool>());
  EXPECT_EQ(eight_b["largest_batch_that_fits"].get<int64_t>(), 0);
  // fp32 when asked: more memory than bf16's activations.
  const auto fp32 = plan_json("--case 06_1b --device-memory 80GiB train.dtype=fp32");
  EXPECT_EQ(fp32["dtype"], "fp32");
  EXPECT_LT(fp32["largest_batch_that_fits"].get<int64_t>(), one_b["largest_batch_that_fits"].get<int64_t>());
  const Result text = twinbench("plan --case 07_8b --devices 1 --device-memory 80GiB");
  EXPECT_NE(text.out.find("fits a GPU with 80.0 GiB: no  (needs "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("largest batch that fits 0  (not even batch 1)"), std::string::npos) << text.out;
}

TEST(DeviceCli, BadDeviceInputIsRefusedNamingTheOption) {
  const Result size = twinbench("plan --case 06_1b --device-memory 80potatoes");
  EXPECT_EQ(size.code, 2);
  EXPECT_NE(size.err.find("--device-memory"), std::string::npos) << size.err;
  const Result size2 = twinbench("plan --case 06_1b --device-memory -3GiB");
  EXPECT_EQ(size2.code, 2);
  EXPECT_NE(size2.err.find("not a memory size"), std::string::npos) << size2.err;
  const Result name = twinbench("run --case 01_base --device gpu0 --no-db");
  EXPECT_EQ(name.code, 2);
  EXPECT_NE(name.err.find("'gpu0' is not one of: auto, cpu, cuda, cuda:N"), std::string::npos) << name.err;
}

TEST(DeviceCli, AskingForAGpuThatIsNotThereStoresNothing) {
  const std::string db = harness().path("nogpu.db");
  const Result r = twinbench("run --case 01_base train.steps=2 --device cuda:0 --db " + db);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--device"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(db));
}

// A case whose plan fits (it declares 1 GiB) but whose batch needs 512 GiB of
// tokens: the CPU allocator really fails. The run ends failed with the bytes
// asked for and the plan's figures; the next case still runs; both are stored.
TEST(DeviceCli, OutOfMemoryIsAnOutcomeAndTheMatrixGoesOn) {
  const std::string case_file = harness().path("oom.toml");
  std::ofstream(case_file) << "description = \"a batch no host holds\"\n"
                              "[model]\npreset = \"tiny\"\n"
                              "[train]\nbatch = 134217728\nseq_len = 512\n"
                              "[requires]\nmemory_gb = 1.0\n";
  const std::string db = harness().path("oom.db");
  const Result r = twinbench("run --case " + case_file + ",01_base train.steps=2 --variants functional --db " + db);
  EXPECT_EQ(r.code, 1) << r.err;
  const std::string reason =
      query_text(db, "SELECT reason FROM runs WHERE case_name = 'oom' AND status = 'failed'");
  EXPECT_EQ(reason.rfind("out of memory on cpu: tried to allocate ", 0), 0u) << reason;
  EXPECT_NE(reason.find(" bytes; the plan estimated "), std::string::npos) << reason;
  EXPECT_NE(reason.find("the case declares 1.00 GiB"), std::string::npos) << reason;
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM runs WHERE case_name = '01_base' AND status = 'completed'"), 1);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM steps JOIN runs USING (run_id) WHERE case_name = '01_base'"), 2);
}

}  // namespace
}  // namespace twinbench::testing

#include "sweep/emit.h"

#include <gtest/gtest.h>

#include <sstream>

#include "core/error.h"

namespace pstrain::sweep {
namespace {

std::vector<HyperparameterSet> sets() {
  return {{1, {{"lr", "0.1"}, {"hidden", "64,32"}}},
          {2, {{"lr", "0.2"}, {"hidden", "32"}}},
          {3, {{"lr", "0.3"}, {"hidden", "16"}}}};
}

ClusterSettings settings() {
  ClusterSettings s;
  s.sweep_dir = "/shared/sweep";
  s.data_dir = "/shared/data";
  s.pstrain = "/opt/pstrain/bin/pstrain";
  s.name = "fmnist";
  return s;
}

std::vector<std::string> documents(const std::string& yaml) {
  std::vector<std::string> out{""};
  std::istringstream in(yaml);
  for (std::string line; std::getline(in, line);) {
    if (line == "---") {
      out.emplace_back();
    } else {
      out.back() += line + "\n";
    }
  }
  return out;
}

TEST(EmitK8s, OneWellFormedJobPerSet) {
  const std::string yaml = emit_k8s_jobs(sets(), settings(), default_job_template(), "built-in");
  const auto docs = documents(yaml);
  ASSERT_EQ(docs.size(), 3u);
  for (std::size_t i = 0; i < docs.size(); ++i) {
    EXPECT_EQ(docs[i].rfind("apiVersion: batch/v1\nkind: Job\n", 0), 0u) << docs[i];
    EXPECT_NE(docs[i].find("name: fmnist-000" + std::to_string(i + 1)), std::string::npos);
    EXPECT_NE(docs[i].find("value: \"" + std::to_string(i + 1) + "\""), std::string::npos);  // JOB_ID
    EXPECT_EQ(docs[i].find("{{"), std::string::npos);
  }
  EXPECT_NE(docs[0].find(R"(command: ["/opt/pstrain/bin/pstrain", "--data-dir", "/shared/data", "--output-dir", )"
                         R"("/shared/sweep/runs/set-0001", "--resume", "auto", "--lr", "0.1", "--hidden", "64,32"])"),
            std::string::npos)
      << docs[0];
}

TEST(EmitK8s, CustomTemplatePlaceholdersAndMpirun) {
  auto s = settings();
  s.ranks = 4;
  const std::string tmpl =
      "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata:\n  name: {{NAME}}\n"
      "# set {{SET_ID}} of {{NUM_SETS}} index {{SET_INDEX}}: {{FLAGS}}\nargs: {{FLAGS_YAML_LIST}}\n"
      "cmd: {{COMMAND_YAML_LIST}}\n";
  const auto docs = documents(emit_k8s_jobs(sets(), s, tmpl, "t.yaml"));
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_NE(docs[1].find("kind: MPIJob"), std::string::npos);
  EXPECT_NE(docs[1].find("# set 2 of 3 index 1: --lr 0.2 --hidden 32"), std::string::npos) << docs[1];
  EXPECT_NE(docs[1].find(R"(args: ["--lr", "0.2", "--hidden", "32"])"), std::string::npos) << docs[1];
  EXPECT_NE(docs[1].find(R"(cmd: ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "4", )"), std::string::npos);
}

TEST(EmitK8s, UnknownPlaceholderIsAUsageErrorWithItsLine) {
  try {
    emit_k8s_jobs(sets(), settings(), "kind: Job\nname: {{JOBNAME}}\n", "t.yaml");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(error.what()).find("t.yaml:2: unknown placeholder {{JOBNAME}}"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(expand_template("a {{NAME", {{"NAME", "x"}}, "t"), Error);
}

TEST(EmitK8s, IndexedJobRunsRunOne) {
  auto s = settings();
  s.parallel = 2;
  s.pstrain_sweep = "/opt/pstrain/bin/pstrain-sweep";
  const std::string yaml = emit_k8s_indexed(3, s);
  EXPECT_EQ(documents(yaml).size(), 1u);
  EXPECT_EQ(yaml.rfind("apiVersion: batch/v1\nkind: Job\n", 0), 0u);
  EXPECT_NE(yaml.find("completionMode: Indexed"), std::string::npos);
  EXPECT_NE(yaml.find("completions: 3\n"), std::string::npos);
  EXPECT_NE(yaml.find("parallelism: 2\n"), std::string::npos);
  EXPECT_NE(yaml.find(R"(["/opt/pstrain/bin/pstrain-sweep", "run-one", "--sweep-dir", "/shared/sweep")"),
            std::string::npos);
}

TEST(EmitSlurm, ArrayScriptReadsItsLineOfSetsTxt) {
  auto s = settings();
  s.parallel = 2;
  const std::string script = emit_slurm(3, s);
  EXPECT_EQ(script.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_NE(script.find("#SBATCH --array=0-2%2\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --ntasks=1\n"), std::string::npos);
  EXPECT_NE(script.find("line=$((SLURM_ARRAY_TASK_ID + 1))"), std::string::npos);
  EXPECT_NE(script.find("\"$SWEEP_DIR/sets.txt\""), std::string::npos);
  EXPECT_NE(script.find("SWEEP_DIR=/shared/sweep\n"), std::string::npos);
  EXPECT_NE(script.find("exec /opt/pstrain/bin/pstrain --data-dir"), std::string::npos);
  s.ranks = 3;
  s.parallel = 0;
  const std::string multi = emit_slurm(3, s);
  EXPECT_NE(multi.find("#SBATCH --array=0-2\n"), std::string::npos);
  EXPECT_NE(multi.find("exec srun /opt/pstrain/bin/pstrain"), std::string::npos);
}

TEST(YamlList, EscapesLikeJson) {
  EXPECT_EQ(yaml_list({"a", "b\"c"}), R"(["a", "b\"c"])");
  EXPECT_EQ(yaml_list({}), "[]");
}

}  // namespace
}  // namespace pstrain::sweep

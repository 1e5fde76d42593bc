#pragma once
// What `pstrain --help` and `pstrain --version` print.
#include <boost/program_options.hpp>
#include <string>

namespace pstrain::job {

// The usage line, the options users set (grouped, with defaults), the general options and examples; never the
// test suite's flags.
std::string usage_text(const boost::program_options::options_description& user_options);

// The version and what this build was made with and runs on (MPI library, BLAS and its kernels, oneDNN, CUDA,
// NCCL, GPUs visible), as `horovodrun --check-build` does: the first thing to send with a bug report.
std::string version_text();

}  // namespace pstrain::job

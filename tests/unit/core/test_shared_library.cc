// core/shared_library.h: a library opened at run time, its functions, and the messages when either is missing.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "core/shared_library.h"

namespace pstrain {
namespace {

TEST(SharedLibrary, ResolvedFunctionComputesWhatTheLinkedOneDoes) {
  const SharedLibrary libm("libm.so.6", "glibc's libm");
  const auto cosine = libm.function<double (*)(double)>("cos");
  for (const double x : {0.0, 0.5, 1.0, 2.5, -3.0}) EXPECT_EQ(cosine(x), std::cos(x)) << x;
  EXPECT_EQ(libm.soname(), "libm.so.6");
}

TEST(SharedLibrary, MissingLibraryIsAMissingDependencyNamingItAndTheRemedy) {
  try {
    const SharedLibrary missing("libpstrain-no-such-library.so.7", "install the no-such package");
    FAIL() << "a library that does not exist was opened";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kMissingDependency);
    const std::string message = error.what();
    EXPECT_NE(message.find("libpstrain-no-such-library.so.7"), std::string::npos) << message;
    EXPECT_NE(message.find("install the no-such package"), std::string::npos) << message;
  }
}

TEST(SharedLibrary, MissingFunctionIsAMissingDependencyNamingTheLibraryAndTheFunction) {
  const SharedLibrary libm("libm.so.6", "glibc's libm");
  try {
    libm.symbol("pstrain_no_such_function");
    FAIL() << "a function that does not exist was found";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kMissingDependency);
    const std::string message = error.what();
    EXPECT_NE(message.find("libm.so.6"), std::string::npos) << message;
    EXPECT_NE(message.find("pstrain_no_such_function"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace pstrain

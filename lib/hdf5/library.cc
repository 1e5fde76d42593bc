#include "hdf5/library.h"

namespace pstrain::hdf5 {

std::unique_lock<std::mutex> lock() {
  static std::mutex mutex;
  std::unique_lock<std::mutex> guard(mutex);
  static const bool quiet = [] {
    H5::Exception::dontPrint();
    return true;
  }();
  (void)quiet;
  return guard;
}

namespace {
struct Innermost {
  std::string message;
};

herr_t keep_innermost(unsigned position, const H5E_error2_t* entry, void* data) {
  // Walking upward, position 0 is the deepest frame: the one that knows what is actually wrong.
  if (position == 0 && entry->desc != nullptr) static_cast<Innermost*>(data)->message = entry->desc;
  return 0;
}
}  // namespace

std::string describe(const H5::Exception& error) {
  Innermost innermost;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &innermost);
  std::string text = error.getDetailMsg();
  if (!innermost.message.empty() && innermost.message != text) {
    text = text.empty() ? innermost.message : innermost.message + " (" + text + ")";
  }
  return text.empty() ? "unknown HDF5 error" : text;
}

}  // namespace pstrain::hdf5

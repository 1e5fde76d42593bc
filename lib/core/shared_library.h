#pragma once
// A shared library opened at run time (dlopen), for a dependency that only some ranks use. cuBLAS is the case in
// point: once loaded it holds 144 MiB resident in every process (benchmarks/rank_memory.sh), servers and CPU
// trainers included, so the CUDA backend opens it when the first GPU backend is made instead of linking it.
#include <string>

namespace pstrain {

class SharedLibrary {
 public:
  // Opens `soname` as the dynamic linker finds a library a program was linked against (LD_LIBRARY_PATH, the
  // RUNPATH of the program, the system's cache). When it cannot, throws Error(kMissingDependency) with the loader's
  // reason and `remedy` (what the user can do about it).
  SharedLibrary(std::string soname, const std::string& remedy);
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // The address of the function `name`; Error(kMissingDependency) naming the library and the symbol when the
  // library has no such symbol (an older version than the one pstrain was built against).
  void* symbol(const char* name) const;
  template <typename Function>
  Function function(const char* name) const {
    return reinterpret_cast<Function>(symbol(name));
  }
  const std::string& soname() const { return soname_; }

 private:
  std::string soname_;
  void* handle_ = nullptr;
};

}  // namespace pstrain

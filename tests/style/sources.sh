# Sourced by check.sh and format_tree.sh: the C++/CUDA sources and headers under version control, one per line
# (generated code lives in build folders, not here).
pstrain_cxx_sources() {
  git -C "$ROOT" ls-files -- '*.cc' '*.h' '*.cu' '*.cuh' '*.cpp' '*.hpp'
}

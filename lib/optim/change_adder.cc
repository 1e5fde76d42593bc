// The update of a shard whose trainers run the optimizer themselves (--mode geo): it adds what it is given, the
// trainers' sample-weighted mean change since they last met the servers.
#include "optim/optimizer_base.h"

namespace pstrain::optim {

namespace {

class ChangeAdder final : public OptimizerBase {
 public:
  explicit ChangeAdder(std::size_t size) : OptimizerBase(OptimizerConfig{}, size, {}) {}

  std::string name() const override { return "add the trainers' changes"; }

  std::vector<std::pair<std::string, std::vector<float>*>> state() override { return {}; }  // stateless

 private:
  void update_elements(std::size_t, std::span<float> parameters, std::span<const float> changes) override {
    for (std::size_t i = 0; i < parameters.size(); ++i) parameters[i] += changes[i];
  }
};

}  // namespace

std::unique_ptr<Optimizer> make_change_adder(std::size_t size) {
  return std::make_unique<ChangeAdder>(size);
}

}  // namespace pstrain::optim

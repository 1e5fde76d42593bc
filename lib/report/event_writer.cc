#include "report/event_writer.h"

#include <unistd.h>

#include <chrono>
#include <system_error>

#include "core/error.h"
#include "report/event.pb.h"

namespace pstrain::report {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

// A fresh file in `folder`. Two writers in the same second on the same host (a resumed run that fails fast,
// tests) get a numbered suffix: TensorBoard reads every file whose name contains "tfevents".
std::filesystem::path new_file(const std::filesystem::path& folder) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) throw Error(ExitCode::kOutput, cat("cannot create ", folder.string(), ": ", error.message()));
  const std::string name = event_file_name(static_cast<std::int64_t>(now_seconds()), host_name());
  std::filesystem::path path = folder / name;
  for (int n = 1; std::filesystem::exists(path); ++n) path = folder / cat(name, ".", n);
  return path;
}

}  // namespace

std::string event_file_name(std::int64_t seconds, const std::string& host) {
  return cat("events.out.tfevents.", seconds, ".", host);
}

EventWriter::EventWriter(const std::filesystem::path& folder)
    : records_(new_file(folder)), event_(std::make_unique<proto::Event>()) {
  event_->set_wall_time(now_seconds());
  event_->set_file_version("brain.Event:2");
  write_event();
  event_->clear_file_version();
}

EventWriter::~EventWriter() = default;

void EventWriter::write_scalars(std::int64_t step, std::initializer_list<Scalar> scalars) {
  write_scalars(step, std::span<const Scalar>(scalars.begin(), scalars.size()));
}

void EventWriter::write_scalars(std::int64_t step, std::span<const Scalar> scalars) {
  event_->set_wall_time(now_seconds());
  event_->set_step(step);
  proto::Summary* summary = event_->mutable_summary();
  summary->clear_value();  // keeps the Value objects and their tag strings for add_value() to reuse
  for (const Scalar& scalar : scalars) {
    proto::Summary::Value* value = summary->add_value();
    value->mutable_tag()->assign(scalar.tag.data(), scalar.tag.size());
    value->set_simple_value(static_cast<float>(scalar.value));
  }
  write_event();
}

void EventWriter::write_restart(std::int64_t step) {
  proto::Event restart;
  restart.set_wall_time(now_seconds());
  restart.set_step(step);
  restart.mutable_session_log()->set_status(proto::SessionLog::START);
  if (!restart.SerializeToString(&bytes_)) {
    throw Error(ExitCode::kInternal, cat("cannot encode a TensorBoard event for ", path().string()));
  }
  records_.write(bytes_);
  records_.flush();
}

void EventWriter::write_event() {
  if (!event_->SerializeToString(&bytes_)) {
    throw Error(ExitCode::kInternal, cat("cannot encode a TensorBoard event for ", path().string()));
  }
  records_.write(bytes_);
  records_.flush();
}

}  // namespace pstrain::report

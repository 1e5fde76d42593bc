#pragma once
// TensorBoard event files: one file per writer, events.out.tfevents.<seconds>.<host> in a folder that
// TensorBoard treats as one run. The first record is the Event with file_version "brain.Event:2"; then one
// Event per write_scalars() call, holding every scalar of that step, flushed at once.
//
// Nothing is allocated per call once the largest call has been seen: the Event message and the byte buffer are
// reused (protobuf keeps cleared sub-messages and string capacity).
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "report/record_file.h"

namespace pstrain::report {

namespace proto {
class Event;
}

struct Scalar {
  std::string_view tag;  // TensorBoard groups charts by the part before the first '/'
  double value;          // stored as a float, as TensorBoard's simple_value is
};

class EventWriter {
 public:
  // Creates `folder` (and its parents) if needed. Throws pstrain::Error(kOutput) when it cannot.
  explicit EventWriter(const std::filesystem::path& folder);
  ~EventWriter();
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;

  void write_scalars(std::int64_t step, std::initializer_list<Scalar> scalars);
  void write_scalars(std::int64_t step, std::span<const Scalar> scalars);  // a list built at run time
  // A SessionLog START at `step`: TensorBoard then forgets every event of the run's earlier files at or after
  // `step` (what PyTorch's SummaryWriter(purge_step=step) writes), so a resumed run's curves continue the earlier
  // ones instead of doubling back over the steps it trains again.
  void write_restart(std::int64_t step);
  const std::filesystem::path& path() const { return records_.path(); }

 private:
  void write_event();

  RecordWriter records_;
  std::unique_ptr<proto::Event> event_;
  std::string bytes_;
};

// The file name TensorBoard looks for: events.out.tfevents.<seconds since the epoch>.<host name>.
std::string event_file_name(std::int64_t seconds, const std::string& host);

}  // namespace pstrain::report

#include "tools/apply/run_state.h"

#include <utility>

namespace fleetplan {

void RunState::Reset() {
  absl::MutexLock lock(&mu_);
  failed_ = false;
  failure_.clear();
  anything_changed_ = false;
  checked_inputs_changed_ = false;
}

void RunState::NoteFailure(std::string message) {
  absl::MutexLock lock(&mu_);
  if (failed_) return;
  failed_ = true;
  failure_ = std::move(message);
}

bool RunState::failed() const {
  absl::MutexLock lock(&mu_);
  return failed_;
}

std::string RunState::failure() const {
  absl::MutexLock lock(&mu_);
  return failure_;
}

void RunState::Interrupt() {
  absl::MutexLock lock(&mu_);
  interrupted_ = true;
}

bool RunState::interrupted() const {
  absl::MutexLock lock(&mu_);
  return interrupted_;
}

bool RunState::Stopping() const {
  absl::MutexLock lock(&mu_);
  return failed_ || interrupted_;
}

void RunState::NoteChanged(bool checked) {
  absl::MutexLock lock(&mu_);
  anything_changed_ = true;
  checked_inputs_changed_ |= checked;
}

void RunState::NoteCheckedInputsChanged() {
  absl::MutexLock lock(&mu_);
  checked_inputs_changed_ = true;
}

bool RunState::anything_changed() const {
  absl::MutexLock lock(&mu_);
  return anything_changed_;
}

bool RunState::checked_inputs_changed() const {
  absl::MutexLock lock(&mu_);
  return checked_inputs_changed_;
}

}  // namespace fleetplan

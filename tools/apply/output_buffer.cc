#include "tools/apply/output_buffer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fleetplan {
namespace {
constexpr size_t kMaxAll = 1 << 20;
}  // namespace

void OutputBuffer::Append(absl::string_view chunk) {
  if (all_.size() < kMaxAll) absl::StrAppend(&all_, chunk.substr(0, kMaxAll - all_.size()));
  while (!chunk.empty()) {
    size_t newline = chunk.find('\n');
    if (newline == absl::string_view::npos) {
      absl::StrAppend(&partial_, chunk);
      return;
    }
    absl::StrAppend(&partial_, chunk.substr(0, newline));
    Line(partial_);
    partial_.clear();
    chunk.remove_prefix(newline + 1);
  }
}

void OutputBuffer::Flush() {
  if (partial_.empty()) return;
  Line(partial_);
  partial_.clear();
}

void OutputBuffer::Line(absl::string_view line) {
  if (on_line_) on_line_(line);
  tail_.emplace_back(line);
  if (tail_.size() > keep_lines_) tail_.pop_front();
}

std::string OutputBuffer::Tail() const {
  std::string tail = absl::StrJoin(tail_, "\n");
  if (!partial_.empty()) {
    if (!tail.empty()) tail += "\n";
    tail += partial_;
  }
  return tail;
}

}  // namespace fleetplan

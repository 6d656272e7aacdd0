#include "tools/protocol/session_message.h"

#include "absl/strings/str_cat.h"
#include "tools/util/overloaded.h"

namespace fleetplan {
namespace {

absl::Status Shape(absl::string_view what, absl::string_view expected) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", expected, " expected"));
}

std::string Number(uint64_t value) { return absl::StrCat(value); }

// Field `index` as a number, or InvalidArgument naming `what`.
absl::Status NumberAt(const Frame& frame, size_t index, absl::string_view what, uint64_t* out) {
  absl::StatusOr<uint64_t> number = FrameNumber(frame, index, what);
  if (!number.ok()) return number.status();
  *out = *number;
  return absl::OkStatus();
}

absl::StatusOr<SessionRequest> ParseWrite(const Frame& frame) {
  if (frame.fields.size() != 3) return Shape("write", "3 fields");
  WriteRequest write{frame.fields[0], 0, frame.fields[2]};
  uint64_t mode = 0;
  if (absl::Status read = NumberAt(frame, 1, "write's mode", &mode); !read.ok()) return read;
  write.mode = mode & 07777;
  return write;
}

absl::StatusOr<SessionRequest> ParsePut(const Frame& frame) {
  if (frame.fields.size() != 2) return Shape("put", "2 fields");
  PutRequest put{frame.fields[0], 0};
  if (absl::Status read = NumberAt(frame, 1, "put's count", &put.count); !read.ok()) return read;
  return put;
}

absl::StatusOr<SessionRequest> ParseRemove(const Frame& frame) {
  if (frame.fields.empty()) return Shape("remove", "a root");
  return RemoveRequest{frame.fields[0],
                       std::vector<std::string>(frame.fields.begin() + 1, frame.fields.end())};
}

absl::StatusOr<SessionRequest> ParseRun(const Frame& frame) {
  if (frame.fields.size() < 5) return Shape("run", "5 fields");
  RunRequest run;
  run.command = frame.fields[0];
  run.cwd = frame.fields[1];
  uint64_t hold = 0, stdin_grace = 0, term_grace = 0;
  for (auto [index, what, out] : {std::make_tuple(2, "run's hold_stdin", &hold),
                                  std::make_tuple(3, "run's stdin grace", &stdin_grace),
                                  std::make_tuple(4, "run's term grace", &term_grace)}) {
    if (absl::Status read = NumberAt(frame, index, what, out); !read.ok()) return read;
  }
  run.hold_stdin = hold != 0;
  run.stdin_grace = absl::Milliseconds(stdin_grace);
  run.term_grace = absl::Milliseconds(term_grace);
  for (size_t i = 5; i < frame.fields.size(); ++i) {
    size_t equals = frame.fields[i].find('=');
    if (equals == std::string::npos || equals == 0) {
      return Shape("run", "NAME=VALUE environment entries");
    }
    run.env.emplace_back(frame.fields[i].substr(0, equals), frame.fields[i].substr(equals + 1));
  }
  return run;
}

absl::StatusOr<SessionRequest> ParseVerify(const Frame& frame) {
  if (frame.fields.size() != 4) return Shape("verify", "4 fields");
  return VerifyRequest{frame.fields[0], frame.fields[1], frame.fields[2], frame.fields[3]};
}

absl::StatusOr<SessionRequest> ParseWorkdir(const Frame& frame) {
  if (frame.fields.size() != 3) return Shape("workdir", "3 fields");
  WorkdirRequest workdir{frame.fields[0], frame.fields[1], 0};
  if (absl::Status read = NumberAt(frame, 2, "the sync's bytes", &workdir.bytes); !read.ok()) {
    return read;
  }
  return workdir;
}

std::string EncodeRun(const RunRequest& run) {
  std::vector<std::string> fields = {run.command, run.cwd, run.hold_stdin ? "1" : "0",
                                     Number(absl::ToInt64Milliseconds(run.stdin_grace)),
                                     Number(absl::ToInt64Milliseconds(run.term_grace))};
  for (const auto& [name, value] : run.env) fields.push_back(absl::StrCat(name, "=", value));
  return EncodeFrame(FrameType::kRun, fields);
}

}  // namespace

std::string EncodeSessionRequest(const SessionRequest& request) {
  return std::visit(
      Overloaded{
          [](const ReadRequest& read) { return EncodeFrame(FrameType::kRead, read.paths); },
          [](const WriteRequest& write) {
            return EncodeFrame(FrameType::kWrite, {write.path, Number(write.mode), write.content});
          },
          [](const PutRequest& put) {
            return EncodeFrame(FrameType::kPut, {put.root, Number(put.count)});
          },
          [](const RemoveRequest& remove) {
            std::vector<std::string> fields = {remove.root};
            fields.insert(fields.end(), remove.paths.begin(), remove.paths.end());
            return EncodeFrame(FrameType::kRemove, fields);
          },
          [](const RunRequest& run) { return EncodeRun(run); },
          [](const VerifyRequest& verify) {
            return EncodeFrame(FrameType::kVerify,
                               {verify.root, verify.manifest, verify.record_path, verify.record});
          },
          [](const WorkdirRequest& workdir) {
            return EncodeFrame(FrameType::kWorkdir,
                               {workdir.workdir, workdir.state_dir, Number(workdir.bytes)});
          },
      },
      request);
}

std::string EncodePutFileHeader(const PutFileHeader& header) {
  return EncodeFrame(FrameType::kFile, {header.path, Number(header.mode), Number(header.size)});
}

std::string EncodeContents(const ContentsAnswer& answer) {
  std::vector<std::string> fields;
  for (const FileContent& file : answer.files) {
    fields.push_back(file.kind == FileContent::Kind::kOk        ? "ok"
                     : file.kind == FileContent::Kind::kMissing ? "missing"
                                                                : "error");
    fields.push_back(file.text);
  }
  return EncodeFrame(FrameType::kContents, fields);
}

absl::StatusOr<SessionRequest> ParseSessionRequest(const Frame& frame) {
  switch (frame.type) {
    case FrameType::kRead:
      return ReadRequest{frame.fields};
    case FrameType::kWrite:
      return ParseWrite(frame);
    case FrameType::kPut:
      return ParsePut(frame);
    case FrameType::kRemove:
      return ParseRemove(frame);
    case FrameType::kRun:
      return ParseRun(frame);
    case FrameType::kVerify:
      return ParseVerify(frame);
    case FrameType::kWorkdir:
      return ParseWorkdir(frame);
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "unexpected frame '", std::string(1, static_cast<char>(frame.type)), "'"));
  }
}

absl::StatusOr<PutFileHeader> ParsePutFileHeader(const Frame& frame) {
  if (frame.type != FrameType::kFile || frame.fields.size() != 3) {
    return Shape("put", "a file header");
  }
  PutFileHeader header{frame.fields[0], 0, 0};
  uint64_t mode = 0;
  if (absl::Status read = NumberAt(frame, 1, "a file's mode", &mode); !read.ok()) return read;
  header.mode = mode & 07777;
  if (absl::Status read = NumberAt(frame, 2, "a file's size", &header.size); !read.ok()) {
    return read;
  }
  return header;
}

absl::StatusOr<ContentsAnswer> ParseContents(const Frame& frame) {
  if (frame.type != FrameType::kContents || frame.fields.size() % 2 != 0) {
    return Shape("contents", "(kind, text) pairs");
  }
  ContentsAnswer answer;
  for (size_t i = 0; i < frame.fields.size(); i += 2) {
    const std::string& kind = frame.fields[i];
    FileContent::Kind parsed = kind == "ok"        ? FileContent::Kind::kOk
                               : kind == "missing" ? FileContent::Kind::kMissing
                                                   : FileContent::Kind::kError;
    answer.files.push_back({parsed, frame.fields[i + 1]});
  }
  return answer;
}

}  // namespace fleetplan

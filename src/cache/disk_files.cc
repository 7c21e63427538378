#include "cache/disk_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace ds::cache {
namespace {

Status ErrnoError(const std::string& what, int err) {
  std::string message = what + ": " + std::strerror(err);
  if (err == ENOSPC || err == EDQUOT || err == EFBIG) return ResourceExhaustedError(message);
  return UnavailableError(message);
}

// Full writes, retrying short ones.
bool WriteAll(int fd, std::span<const uint8_t> bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += n;
  }
  return true;
}

bool ReadAll(int fd, uint8_t* out, size_t size, off_t offset) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, out + done, size - done, offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += n;
  }
  return true;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

Status SyncDirectory(const std::string& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoError("open " + dir, errno);
  if (::fsync(fd.get()) != 0) return ErrnoError("fsync " + dir, errno);
  return OkStatus();
}

// Creates `dir` and its missing parents, mode 0700.
Status MakeMissingDirectories(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path path(dir);
  std::vector<std::filesystem::path> missing;
  for (auto p = path; !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0700) != 0 && errno != EEXIST) {
      return ErrnoError("cannot create " + it->string(), errno);
    }
  }
  return OkStatus();
}

std::string Octal(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// Whoever can write a directory the cache uses can plant, swap or delete its records, so each
// must be a directory of this process's effective user that no one else can write; its group and
// other bits are then cleared, as the records are users' conversations. The root (--cache-dir) is
// the user's choice: it may be a symlink, and one we own is tightened whatever its mode, since
// every directory the server uses inside it is checked again. Below it a symlink or a directory
// others can write is refused, never repaired: it may hold records already.
Status CheckOwnDirectory(const std::string& dir, bool is_root) {
  struct stat st;
  if ((is_root ? ::stat(dir.c_str(), &st) : ::lstat(dir.c_str(), &st)) != 0) {
    return ErrnoError("cannot stat " + dir, errno);
  }
  if (S_ISLNK(st.st_mode)) {
    return UnavailableError("refusing " + dir + ": a symbolic link, where the cache makes its " +
                            "own directories");
  }
  if (!S_ISDIR(st.st_mode)) return UnavailableError(dir + " is not a directory");
  if (st.st_uid != ::geteuid()) {
    return UnavailableError("refusing " + dir + ": owned by uid " + std::to_string(st.st_uid) +
                            ", not by this server's uid " + std::to_string(::geteuid()) +
                            ", so another user controls its records");
  }
  if (!is_root && (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return UnavailableError("refusing " + dir + ": writable by group or others (mode " +
                            Octal(st.st_mode) + "), so another user may have planted records " +
                            "there; remove it or chmod go-w it");
  }
  if ((st.st_mode & 077) != 0 && ::chmod(dir.c_str(), st.st_mode & 0700) != 0) {
    return ErrnoError("cannot make " + dir + " private", errno);
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return ErrnoError("cannot write " + dir, errno);
  return OkStatus();
}

const char* FileKind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

// Opens a record for reading, and `st` with it. Neither a symlink nor anything but a regular file
// is a record: a link named *.rec would redirect the read elsewhere, and a FIFO would hang it
// (O_NONBLOCK lets the open return so that fstat can tell). NotFound when the file is gone;
// Unavailable, with a message naming what was found, for anything else.
Status OpenRecord(const std::string& path, Fd* fd, struct stat* st) {
  fd->reset(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd->get() < 0) {
    const int err = errno;
    if (err == ENOENT) return NotFoundError(path + " is gone");
    if (err == ELOOP) return UnavailableError("a symbolic link, not a record");
    return UnavailableError(std::string("cannot open: ") + std::strerror(err));
  }
  if (::fstat(fd->get(), st) != 0) {
    return UnavailableError(std::string("cannot stat: ") + std::strerror(errno));
  }
  if (!S_ISREG(st->st_mode)) {
    return UnavailableError(std::string(FileKind(st->st_mode)) + ", not a record");
  }
  return OkStatus();
}

// Reads the header of an open record: meta and the header's size.
StatusOr<int64_t> ReadHeader(int fd, DiskRecordMeta* meta) {
  std::vector<uint8_t> header(kFixedHeaderBytes);
  if (!ReadAll(fd, header.data(), header.size(), 0)) {
    return DataLossError("record shorter than its header");
  }
  DS_ASSIGN_OR_RETURN(int64_t rest, ParseFixedHeader(header, meta));
  header.resize(kFixedHeaderBytes + rest);
  if (!ReadAll(fd, header.data() + kFixedHeaderBytes, rest, kFixedHeaderBytes)) {
    return DataLossError("record header truncated");
  }
  DS_ASSIGN_OR_RETURN(*meta, DecodeRecordHeader(header));
  return static_cast<int64_t>(header.size());
}

}  // namespace

Status EnsureCacheRoot(const std::string& dir) {
  DS_RETURN_IF_ERROR(MakeMissingDirectories(dir));
  return CheckOwnDirectory(dir, /*is_root=*/true);
}

Status EnsurePrivateDirectory(const std::string& dir) {
  DS_RETURN_IF_ERROR(MakeMissingDirectories(dir));
  return CheckOwnDirectory(dir, /*is_root=*/false);
}

Status WriteRecordAtomically(const std::string& dir, const std::string& name,
                             std::span<const uint8_t> header, std::span<const uint8_t> payload) {
  static std::atomic<uint64_t> sequence{0};
  const std::string tmp_dir = dir + "/" + kTmpDirName;
  const std::string tmp = tmp_dir + "/" + name + "." + std::to_string(::getpid()) + "." +
                          std::to_string(sequence++);
  Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (fd.get() < 0) return ErrnoError("cannot create " + tmp, errno);
  if (!WriteAll(fd.get(), header) || !WriteAll(fd.get(), payload) || ::fsync(fd.get()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoError("cannot write " + tmp, err);
  }
  if (::close(fd.release()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoError("cannot write " + tmp, err);
  }
  const std::string final_path = dir + "/" + name;
  if (::rename(tmp.c_str(), final_path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoError("cannot rename " + tmp, err);
  }
  return SyncDirectory(dir);
}

Status ReadRecord(const std::string& path, bool verify_payload, DiskRecordMeta* meta,
                  std::vector<uint8_t>* payload) {
  Fd fd(-1);
  struct stat st;
  DS_RETURN_IF_ERROR(OpenRecord(path, &fd, &st));
  DS_ASSIGN_OR_RETURN(int64_t header_bytes, ReadHeader(fd.get(), meta));
  if (st.st_size != header_bytes + meta->payload_bytes) {
    return DataLossError("record size " + std::to_string(st.st_size) + " does not match its " +
                         "header (" + std::to_string(header_bytes + meta->payload_bytes) + ")");
  }
  payload->resize(meta->payload_bytes);
  if (!ReadAll(fd.get(), payload->data(), payload->size(), header_bytes)) {
    return DataLossError("record payload truncated");
  }
  if (verify_payload && !(PayloadChecksum(*payload) == meta->payload_checksum)) {
    return DataLossError("record payload checksum mismatch");
  }
  return OkStatus();
}

void Quarantine(const std::string& dir, const std::string& name) {
  const std::string target_dir = dir + "/" + kQuarantineDirName;
  const std::string from = dir + "/" + name;
  const std::string to = target_dir + "/" + name;
  // Never with parents: a model directory that vanished is not made again here.
  ::mkdir(target_dir.c_str(), 0700);
  if (!CheckOwnDirectory(target_dir, /*is_root=*/false).ok() ||
      ::rename(from.c_str(), to.c_str()) != 0) {
    ::unlink(from.c_str());
  }
}

std::vector<ScannedRecord> ScanRecords(const std::string& dir) {
  std::vector<ScannedRecord> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* entry = ::readdir(d)) {
    std::string name = entry->d_name;
    if (name.size() < 5 || name.compare(name.size() - 4, 4, ".rec") != 0) continue;
    ScannedRecord record;
    record.name = name;
    const std::string path = dir + "/" + name;
    Fd fd(-1);
    struct stat st;
    Status opened = OpenRecord(path, &fd, &st);
    if (opened.code() == StatusCode::kNotFound) continue;  // gone since readdir
    if (!opened.ok()) {
      record.status = std::move(opened);
      out.push_back(std::move(record));
      continue;
    }
    record.file_bytes = st.st_size;
    StatusOr<int64_t> header_bytes = ReadHeader(fd.get(), &record.meta);
    if (!header_bytes.ok()) {
      record.status = header_bytes.status();
    } else if (st.st_size != *header_bytes + record.meta.payload_bytes) {
      record.status = DataLossError("record size does not match its header");
    }
    out.push_back(std::move(record));
  }
  ::closedir(d);
  return out;
}

int64_t RemoveTemporaryFiles(const std::string& dir) {
  const std::string tmp_dir = dir + "/" + kTmpDirName;
  DIR* d = ::opendir(tmp_dir.c_str());
  if (d == nullptr) return 0;
  int64_t removed = 0;
  while (dirent* entry = ::readdir(d)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    // <record>.<pid>.<sequence>: a live writer's file stays (another server on this directory).
    size_t last = name.rfind('.');
    size_t pid_dot = last == std::string::npos || last == 0 ? std::string::npos
                                                            : name.rfind('.', last - 1);
    if (pid_dot != std::string::npos) {
      pid_t pid = static_cast<pid_t>(std::atoll(name.c_str() + pid_dot + 1));
      if (pid > 0 && pid != ::getpid() && (::kill(pid, 0) == 0 || errno == EPERM)) continue;
    }
    if (::unlink((tmp_dir + "/" + name).c_str()) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

}  // namespace ds::cache

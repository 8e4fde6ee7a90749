// Whether a directory can be created in a given directory: asked at the start of a run about the
// experiment's directory, which the tool creates only at the program's end (a run of hours must
// not end unmeasured). Shared by the collector (which then falls back to another place) and
// `scalea run` (which refuses such a -o before it starts the program).
//
// access() alone does not tell: it says yes to root on /proc and the other pseudo file systems,
// where no directory can be made. Creating and removing a probe directory does, but costs two
// metadata operations: 0.14 ms on this machine's ext4, far more on a parallel file system, where
// every rank of a job would probe the same directory at once. So the probe is made only when
// cheaper facts leave a doubt: on the file systems named below (local disks, tmpfs, NFS and the
// parallel ones of HPC centres), a directory the caller may write into (faccessat with the
// effective ids, which the kernel answers with ACLs, security modules and a read-only mount's
// EROFS), with blocks and inodes left and not marked immutable, takes a new directory.
#pragma once
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace scalea {

namespace creatable_detail {

// File systems whose permission checks (faccessat) and free counts (statfs) tell the truth.
inline bool ordinary_file_system(unsigned long type) {
  switch (type) {
    case 0xEF53:      // ext2, ext3, ext4
    case 0x58465342:  // XFS
    case 0x9123683E:  // Btrfs
    case 0x01021994:  // tmpfs
    case 0x2FC12FC1:  // ZFS
    case 0xF2F52010:  // F2FS
    case 0x794C7630:  // overlayfs (containers)
    case 0x6969:      // NFS
    case 0x0BD00BD0:  // Lustre
    case 0x47504653:  // GPFS (IBM Storage Scale)
    case 0x19830326:  // BeeGFS
    case 0x00C36400:  // CephFS
      return true;
    default: return false;
  }
}

// Whether the facts alone say that a directory can be created in `dir` (an existing directory).
inline bool surely_creatable(const std::string& dir) {
  struct statfs fs;
  if (statfs(dir.c_str(), &fs) != 0 || !ordinary_file_system(static_cast<unsigned long>(fs.f_type)))
    return false;
  if (fs.f_bavail == 0 || (fs.f_files != 0 && fs.f_ffree == 0)) return false;
  if (faccessat(AT_FDCWD, dir.c_str(), W_OK | X_OK, AT_EACCESS) != 0) return false;
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  int flags = 0;
  bool immutable = ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & FS_IMMUTABLE_FL);
  close(fd);
  return !immutable;
}

}  // namespace creatable_detail

// "" when a directory can be created in `parent`, else why not (a phrase naming `parent`).
// `probe_name` names the directory made and removed again when the facts leave a doubt; one that
// exists already (another process of the job probing) counts as a yes.
inline std::string why_no_directory_in(const std::string& parent, const std::string& probe_name) {
  struct stat st;
  if (stat(parent.c_str(), &st) != 0) return parent + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return parent + " is not a directory";
  if (creatable_detail::surely_creatable(parent)) return "";
  std::string probe = parent + "/" + probe_name;
  if (mkdir(probe.c_str(), 0700) == 0) {
    rmdir(probe.c_str());
    return "";
  }
  if (errno == EEXIST) return "";
  return "cannot make a directory in " + parent + ": " + std::strerror(errno);
}

}  // namespace scalea

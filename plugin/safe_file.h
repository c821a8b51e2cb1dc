// Writing a file so that nobody can turn the write against another file.
//
// The plugin (as SlurmUser) and the tools (often as root: easypp-import
// --state, easypp-shadow --state, writing into SlurmUser's
// StateSaveLocation) replace files in directories that another user may
// own. Everything a path names can change between two system calls, so the
// write touches paths only where the kernel refuses to follow a link:
//
//  1. the directory is opened once; everything after goes through that
//     descriptor (openat, renameat), so swapping the directory's name does
//     not move the write;
//  2. the directory is refused (named in the error) when anyone but its
//     owner and root can write to it (group- or world-writable, sticky or
//     not), or when its owner is neither root, nor the writer, nor the user
//     the file is written for;
//  3. the temporary file gets a name nobody can guess and is created with
//     O_CREAT | O_EXCL | O_NOFOLLOW: a file or link planted in advance is
//     never opened, and no one else holds a descriptor on what is written;
//  4. its mode and owner are set through the descriptor (fchmod, fchown)
//     before the rename: nothing is done by path once the file is in place,
//     so a link swapped in after the rename is never followed;
//  5. fsync, renameat over the final name (rename replaces a link, never
//     follows it), fsync of the directory.
//
// A failure before the rename removes the temporary file and leaves the old
// file as it was. No function here throws.
#pragma once

#include <sys/types.h>

#include <string>

namespace easypp::plugin {

/// Who a written file belongs to. Unset: whoever writes it. Set: root
/// gives the file to another user (SlurmUser) through the descriptor.
struct FileOwner {
  bool set = false;
  uid_t uid = 0;
  gid_t gid = 0;
};

/// Whether point 2 applies. kPrivate: always (the plugin's files and
/// everything the Slurm-side tools write). kWhenRoot: only when running as
/// root (easypp-sim's outputs, which a researcher may well write into a
/// group's shared directory; points 1 and 3 to 5 still keep that safe).
enum class DirCheck { kPrivate, kWhenRoot };

/// write_file_safely()'s `mode` for "0666 less the umask", as a file any
/// program creates (easypp-sim's outputs).
constexpr unsigned kModeFromUmask = ~0u;

/// Replace `path` with `data`, mode exactly `mode` (whatever the umask),
/// owner `owner`, as described above. False with *error (naming the path,
/// or the directory that was refused) on any failure.
bool write_file_safely(const std::string& path, const std::string& data, unsigned mode,
                       const FileOwner& owner, std::string* error,
                       DirCheck check = DirCheck::kPrivate);

/// The directory check of write_file_safely() on its own, for tools that
/// want to refuse before hours of work: true if `dir` may hold files
/// written for `owner` (unset: the caller); else false with *error.
bool private_directory(const std::string& dir, const FileOwner& owner, std::string* error);

/// Set the permission bits of the regular file `path` to `mode` through a
/// descriptor opened with O_NOFOLLOW (a link in its place is left alone).
/// True if the file is missing, not a regular file, or now has that mode.
bool set_file_mode(const std::string& path, unsigned mode, std::string* error);

/// The directory part of `path` ("." when there is none).
std::string dir_of(const std::string& path);

}  // namespace easypp::plugin

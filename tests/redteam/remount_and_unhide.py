"""Attack: as the old sandbox left root's capabilities to a root-run grader, unmounts the
empty folders that hid OUT and the hidden config, remounts / read-write, and tries to
read the hidden config and write the canary.
Defence: the child runs as an unprivileged uid with no capability (umount and mount fail
with EPERM), and the hidden paths are not under a cover: they were never bound.
Expect: status=cheat_suspected; without=runtime_error; flags=strict:process,strict:file_access; without_message=held
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cerrno>
#include <cstring>
#include <string>
extern "C" int umount2(const char*, int);
extern "C" int mount(const char*, const char*, const char*, unsigned long, const void*);
extern "C" int open(const char*, int, ...);

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    std::string report;
    const char* covers[] = {"/tmp", "/", "@@OUT@@", "@@SUBMISSIONS@@", "@@HIDDEN_FILE@@"};
    for (const char* path : covers) {
        int rc = umount2(path, 2 /* MNT_DETACH */);
        TORCH_CHECK(rc != 0, "SANDBOX ESCAPE: unmounted ", path);
        report += std::string("umount ") + path + ": " + std::strerror(errno) + "; ";
    }
    int rc = mount(nullptr, "/", nullptr, 32 | 1 << 5 /* MS_REMOUNT | MS_BIND */, nullptr);
    TORCH_CHECK(rc != 0, "SANDBOX ESCAPE: remounted / read-write");
    TORCH_CHECK(open("@@HIDDEN_FILE@@", 0) < 0, "SANDBOX ESCAPE: read the hidden config");
    TORCH_CHECK(open("@@CANARY_FILE@@", 01) < 0, "SANDBOX ESCAPE: opened the canary for writing");
    TORCH_CHECK(false, "sandbox held: ", report);
    return q;
}
"""

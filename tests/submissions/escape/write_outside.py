"""Sandbox test: creates files outside its work folder (@@TARGETS@@, '|'-separated,
filled in by the test). Raises "SANDBOX ESCAPE" if any open for writing succeeds,
else "sandbox held"."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cerrno>
#include <cstring>
#include <string>
#define CAT(a, b) a##b
extern "C" int CAT(op, en)(const char*, int, ...);

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    std::string targets = "@@TARGETS@@", reason;
    size_t start = 0;
    while (start <= targets.size()) {
        size_t end = targets.find('|', start);
        if (end == std::string::npos) end = targets.size();
        std::string path = targets.substr(start, end - start);
        int fd = CAT(op, en)(path.c_str(), 0101 /* O_WRONLY | O_CREAT */, 0644);
        TORCH_CHECK(fd < 0, "SANDBOX ESCAPE: wrote ", path);
        reason += path + ": " + std::strerror(errno) + "; ";
        start = end + 1;
    }
    TORCH_CHECK(false, "sandbox held: ", reason);
    return q;
}
"""

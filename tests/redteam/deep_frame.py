"""Attack: writes a well-sized frame whose JSON nests 50 000 levels deep to every file
descriptor the judge might read (the reply pipe among them; without blocking on a pipe no one
drains, which the GPU image's process has: there the first version timed itself out before
the reply pipe): a parser that recurses per
level raises RecursionError in the judge, which was no protocol error it knew, and the
row became grader_error with the batch's exit 70.
Defence: the judge measures a frame's nesting before it parses it (no recursion, strings
skipped) and refuses one deeper than 32 levels as a broken protocol, like any other
malformed frame; the parse's own RecursionError is a protocol error too.
Expect: status=runtime_error; flags=warning:raw_io; message=nested
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <chrono>
#include <string>
extern "C" long write(int, const void*, unsigned long);
extern "C" int fcntl(int, int, ...);

// Writes the whole frame to `fd` without ever blocking for long: a pipe no one drains (the
// process has more of them on some machines) is given up after 50 ms without progress; the
// judge's reply pipe is drained, so the frame gets through.
static void send(int fd, const std::string& bytes) {
    const int flags = fcntl(fd, 3 /* F_GETFL */);
    if (flags < 0 || fcntl(fd, 4 /* F_SETFL */, flags | 04000 /* O_NONBLOCK */) < 0) return;
    size_t done = 0;
    auto last = std::chrono::steady_clock::now();
    while (done < bytes.size() && std::chrono::steady_clock::now() - last < std::chrono::milliseconds(50)) {
        const long n = write(fd, bytes.data() + done, bytes.size() - done);
        if (n > 0) {
            done += (size_t)n;
            last = std::chrono::steady_clock::now();
        } else if (n == 0) {
            break;
        }
    }
    fcntl(fd, 4, flags);
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int depth = 50000;
    std::string body = std::string(depth, '[') + std::string(depth, ']');
    const unsigned len = (unsigned)body.size();
    std::string frame = {(char)(len & 255), (char)((len >> 8) & 255), (char)((len >> 16) & 255), 0};
    frame += body;
    for (int fd = 3; fd < 64; ++fd) send(fd, frame);
    return q;
}
"""

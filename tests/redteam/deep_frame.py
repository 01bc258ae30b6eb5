"""Attack: writes a well-sized frame whose JSON nests 50 000 levels deep to every file
descriptor the judge might read (the reply pipe among them): a parser that recurses per
level raises RecursionError in the judge, which was no protocol error it knew, and the
row became grader_error with the batch's exit 70.
Defence: the judge measures a frame's nesting before it parses it (no recursion, strings
skipped) and refuses one deeper than 32 levels as a broken protocol, like any other
malformed frame; the parse's own RecursionError is a protocol error too.
Expect: status=runtime_error; flags=warning:raw_io; message=nested
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <string>
extern "C" long write(int, const void*, unsigned long);

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int depth = 50000;
    std::string frame = std::string(depth, '[') + std::string(depth, ']');
    unsigned len = (unsigned)frame.size();
    unsigned char head[4] = {(unsigned char)(len & 255), (unsigned char)((len >> 8) & 255),
                             (unsigned char)((len >> 16) & 255), 0};
    for (int fd = 3; fd < 64; ++fd) {
        write(fd, head, 4);
        write(fd, frame.data(), len);
    }
    return q;
}
"""

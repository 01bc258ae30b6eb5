"""Attack: writes garbage, then a forged "perfect" reply, to every file descriptor the
judge might read (the reply pipe among them), then closes them all.
Defence: the judge reads frames with a size cap and a deadline and validates every field;
a broken frame ends the grade as a runtime_error, never as a verdict the child wrote.
Expect: status=runtime_error; flags=warning:raw_io; message=protocol
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cstring>
extern "C" long write(int, const void*, unsigned long);
extern "C" int close(int);

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const char forged[] = "{\"verdict\": \"ok\", \"output\": {\"type\": \"Tensor\"}, \"nbytes\": 0}";
    unsigned len = sizeof(forged) - 1;
    unsigned char frame[4] = {(unsigned char)len, 0, 0, 0};
    for (int fd = 3; fd < 64; ++fd) {
        write(fd, "\xff\xff\xff\x7fgarbage", 11);
        write(fd, frame, 4);
        write(fd, forged, len);
    }
    for (int fd = 3; fd < 64; ++fd) close(fd);
    return q;
}
"""
